import type { ConversionContext, OpHandler } from '../conversion-context.js';
import { int, ints, str } from '../onnx-writer.js';
import { attrInt, attrInts, attrString } from '../tf-attrs.js';
import type { TfNode } from '../tfjs-model.js';

/** Stands in for "to the end" in ONNX Slice bounds. */
const END = 2 ** 62;

function bit(mask: number, i: number): boolean {
  return ((mask >> i) & 1) === 1;
}

function unsqueeze(ctx: ConversionContext, x: string, axes: number[]): string {
  return ctx.g.op('Unsqueeze', [x, ctx.g.int64(axes)]);
}

function squeeze(ctx: ConversionContext, x: string, axes: number[]): string {
  return ctx.g.op('Squeeze', [x, ctx.g.int64(axes)]);
}

/**
 * TF StridedSlice with begin/end/shrink/new-axis masks (the ellipsis mask is refused: no default model uses it). A
 * new-axis entry consumes no input dimension; it becomes a size-1 axis of the output after the shrunk ones are gone.
 */
const stridedSlice: OpHandler = (node, ctx) => {
  const begin = ctx.constValues(node, 1, 'begin');
  const end = ctx.constValues(node, 2, 'end');
  const strides = ctx.constValues(node, 3, 'strides');
  if (attrInt(node, 'ellipsis_mask')) {
    throw new Error(`node ${node.name} (StridedSlice): the ellipsis mask is not supported`);
  }
  const beginMask = attrInt(node, 'begin_mask');
  const endMask = attrInt(node, 'end_mask');
  const shrinkMask = attrInt(node, 'shrink_axis_mask');
  const newAxisMask = attrInt(node, 'new_axis_mask');
  const starts: number[] = [];
  const ends: number[] = [];
  const steps: number[] = [];
  const axes: number[] = [];
  const shrink: number[] = [];
  const inserted: number[] = [];
  let inputAxis = 0;
  let outputAxis = 0;
  begin.forEach((b, i) => {
    if (bit(newAxisMask, i)) {
      inserted.push(outputAxis++);
      return;
    }
    const axis = inputAxis++;
    axes.push(axis);
    const step = strides[i];
    if (bit(shrinkMask, i)) {
      starts.push(b);
      ends.push(b === -1 ? END : b + 1);
      steps.push(1);
      shrink.push(axis);
      return;
    }
    outputAxis++;
    starts.push(bit(beginMask, i) ? (step > 0 ? 0 : END) : b);
    ends.push(bit(endMask, i) ? (step > 0 ? END : -END) : end[i]);
    steps.push(step);
  });
  let out = axes.length
    ? ctx.g.op('Slice', [
        ctx.input(node, 0),
        ctx.g.int64(starts),
        ctx.g.int64(ends),
        ctx.g.int64(axes),
        ctx.g.int64(steps),
      ])
    : ctx.input(node, 0);
  if (shrink.length) out = squeeze(ctx, out, shrink);
  return [inserted.length ? unsqueeze(ctx, out, inserted) : out];
};

/** TF Slice(begin, size), size -1 meaning "to the end". */
const slice: OpHandler = (node, ctx) => {
  const begin = ctx.constValues(node, 1, 'begin');
  const size = ctx.constValues(node, 2, 'size');
  const ends = size.map((s, i) => (s === -1 ? END : begin[i] + s));
  return [
    ctx.g.op('Slice', [ctx.input(node, 0), ctx.g.int64(begin), ctx.g.int64(ends), ctx.g.int64(begin.map((_, i) => i))]),
  ];
};

function pad(mode: 'constant' | 'reflect'): OpHandler {
  return (node, ctx) => {
    if (node.op === 'MirrorPad' && attrString(node, 'mode') !== 'REFLECT') {
      throw new Error(`node ${node.name} (MirrorPad): only REFLECT mode is supported`);
    }
    const paddings = ctx.constValues(node, 1, 'paddings');
    const before = paddings.filter((_, i) => i % 2 === 0);
    const after = paddings.filter((_, i) => i % 2 === 1);
    const inputs = [ctx.input(node, 0), ctx.g.int64([...before, ...after])];
    if (node.op === 'PadV2') inputs.push(ctx.input(node, 2));
    return [ctx.g.op('Pad', inputs, { mode: str(mode) })];
  };
}

function concatAxis(node: TfNode, ctx: ConversionContext): number {
  const n = ctx.dataInputs(node).length;
  return ctx.constValues(node, n - 1, 'the concat axis')[0];
}

/** Shape-manipulating ops. */
export const shapeOps: Record<string, OpHandler> = {
  Reshape: (node, ctx) => [ctx.g.op('Reshape', [ctx.input(node, 0), ctx.int64Input(node, 1)])],
  Squeeze: (node, ctx) => {
    const axes = attrInts(node, 'squeeze_dims');
    if (!axes.length) throw new Error(`node ${node.name} (Squeeze): squeezing all unit dimensions needs squeeze_dims`);
    return [squeeze(ctx, ctx.input(node, 0), axes)];
  },
  ExpandDims: (node, ctx) => [unsqueeze(ctx, ctx.input(node, 0), ctx.constValues(node, 1, 'dim'))],
  Pack: (node, ctx) => {
    const axis = attrInt(node, 'axis');
    const parts = ctx.dataInputs(node).map((_, i) => unsqueeze(ctx, ctx.input(node, i), [axis]));
    return [ctx.g.op('Concat', parts, { axis: int(axis) })];
  },
  Unpack: (node, ctx) => {
    const axis = attrInt(node, 'axis');
    const num = attrInt(node, 'num');
    const x = ctx.input(node, 0);
    const parts = num === 1 ? [x] : ctx.g.node('Split', [x], { axis: int(axis) }, num);
    return parts.map((p) => squeeze(ctx, p, [axis]));
  },
  Split: (node, ctx) => {
    const axis = ctx.constValues(node, 0, 'the split axis')[0];
    const num = attrInt(node, 'num_split');
    return ctx.g.node('Split', [ctx.input(node, 1)], { axis: int(axis) }, num);
  },
  SplitV: (node, ctx) => {
    const sizes = ctx.constValues(node, 1, 'split sizes');
    if (sizes.includes(-1)) throw new Error(`node ${node.name} (SplitV): inferred (-1) split sizes are not supported`);
    const axis = ctx.constValues(node, 2, 'the split axis')[0];
    return ctx.g.node('Split', [ctx.input(node, 0), ctx.g.int64(sizes)], { axis: int(axis) }, sizes.length);
  },
  ConcatV2: (node, ctx) => {
    const n = ctx.dataInputs(node).length - 1;
    const parts = Array.from({ length: n }, (_, i) => ctx.input(node, i));
    return [ctx.g.op('Concat', parts, { axis: int(concatAxis(node, ctx)) })];
  },
  Transpose: (node, ctx) => [
    ctx.g.op('Transpose', [ctx.input(node, 0)], { perm: ints(ctx.constValues(node, 1, 'perm')) }),
  ],
  Tile: (node, ctx) => [ctx.g.op('Tile', [ctx.input(node, 0), ctx.int64Input(node, 1)])],
  Fill: (node, ctx) => [ctx.g.op('Expand', [ctx.input(node, 1), ctx.int64Input(node, 0)])],
  Range: (node, ctx) => [ctx.g.op('Range', [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)])],
  Shape: (node, ctx) => [ctx.cast(ctx.g.op('Shape', [ctx.input(node, 0)]), 'int32')],
  Size: (node, ctx) => [ctx.cast(ctx.g.op('Size', [ctx.input(node, 0)]), 'int32')],
  StridedSlice: stridedSlice,
  Slice: slice,
  Pad: pad('constant'),
  PadV2: pad('constant'),
  MirrorPad: pad('reflect'),
};
