import type { ConversionContext, OpHandler } from '../conversion-context.js';
import { int, ints, tensorAttr } from '../onnx-writer.js';
import { attrInt } from '../tf-attrs.js';
import type { DType } from '../tfjs-model.js';

function zeroTensor(dtype: DType) {
  const data = dtype === 'float32' ? new Float32Array(1) : dtype === 'int32' ? new Int32Array(1) : new Uint8Array(1);
  return tensorAttr({ dtype, shape: [1], data });
}

/** Writes `updates` at `indices` ([n, k], int64) into `data` (TF indices are unique in every default model). */
function scatter(ctx: ConversionContext, data: string, indices: string, updates: string): string {
  return ctx.g.op('ScatterND', [data, indices, updates]);
}

/** Indexing, scatter/gather, top-k and arg-max ops. */
export const indexingOps: Record<string, OpHandler> = {
  GatherV2: (node, ctx) => {
    if (attrInt(node, 'batch_dims')) throw new Error(`node ${node.name} (GatherV2): batch_dims is not supported`);
    const axis = ctx.constValues(node, 2, 'the gather axis')[0];
    return [ctx.g.op('Gather', [ctx.input(node, 0), ctx.input(node, 1)], { axis: int(axis) })];
  },
  Gather: (node, ctx) => [ctx.g.op('Gather', [ctx.input(node, 0), ctx.input(node, 1)], { axis: int(0) })],
  GatherNd: (node, ctx) => [ctx.g.op('GatherND', [ctx.input(node, 0), ctx.int64Input(node, 1)])],
  ScatterNd: (node, ctx) => {
    const zeros = ctx.g.op('ConstantOfShape', [ctx.int64Input(node, 2)], {
      value: zeroTensor(ctx.inputDType(node, 1)),
    });
    return [scatter(ctx, zeros, ctx.int64Input(node, 0), ctx.input(node, 1))];
  },
  SparseToDense: (node, ctx) => {
    const shape = ctx.int64Input(node, 1);
    const dense = ctx.g.op('Expand', [ctx.input(node, 3), shape]);
    // sparse_indices may be [n] (1-D output) or [n, rank]: reshape to [n, rank] using the output shape's length.
    const rank = ctx.g.op('Shape', [shape]);
    const indices = ctx.g.op('Reshape', [
      ctx.int64Input(node, 0),
      ctx.g.op('Concat', [ctx.g.int64([-1]), rank], { axis: int(0) }),
    ]);
    const count = ctx.g.op('Slice', [ctx.g.op('Shape', [indices]), ctx.g.int64([0]), ctx.g.int64([1])]);
    const values = ctx.g.op('Expand', [ctx.input(node, 2), count]);
    return [scatter(ctx, dense, indices, values)];
  },
  Where: (node, ctx) => {
    if (ctx.dataInputs(node).length === 3) {
      return [ctx.g.op('Where', [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)])];
    }
    // TF Where(cond) → [n, rank] coordinates in row-major order; ONNX NonZero gives [rank, n].
    const coordinates = ctx.g.op('Transpose', [ctx.g.op('NonZero', [ctx.input(node, 0)])], { perm: ints([1, 0]) });
    return [ctx.cast(coordinates, 'int32')];
  },
  TopKV2: (node, ctx) => {
    const k = ctx.constValues(node, 1, 'k');
    const [values, indices] = ctx.g.node(
      'TopK',
      [ctx.input(node, 0), ctx.g.int64(k.length ? [k[0]] : k, [1])],
      { axis: int(-1), largest: int(1), sorted: int(1) },
      2,
    );
    return [values, ctx.cast(indices, 'int32')];
  },
  ArgMax: (node, ctx) => {
    const axis = ctx.constValues(node, 1, 'the dimension')[0];
    return [ctx.cast(ctx.g.op('ArgMax', [ctx.input(node, 0)], { axis: int(axis), keepdims: int(0) }), 'int32')];
  },
};
