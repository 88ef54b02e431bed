import type { ConversionContext, OpHandler } from '../conversion-context.js';
import { int, ints, str, type OnnxAttr } from '../onnx-writer.js';
import { attrBool, attrInts, attrString } from '../tf-attrs.js';
import type { TfNode } from '../tfjs-model.js';
import { transposeConst } from './const-transpose.js';
import { applyFusedTail, hasFusedBias } from './elementwise.js';

const toNchw = [0, 3, 1, 2];
const toNhwc = [0, 2, 3, 1];

function checkNhwc(node: TfNode): void {
  const format = attrString(node, 'data_format', 'NHWC');
  if (format !== 'NHWC') throw new Error(`node ${node.name} (${node.op}): data_format ${format} is not supported`);
}

/** ONNX padding attributes for TF's `padding` (SAME pads the extra pixel at the end, like SAME_UPPER). */
function paddingAttrs(node: TfNode): Record<string, OnnxAttr> {
  const padding = attrString(node, 'padding');
  if (padding === 'SAME') return { auto_pad: str('SAME_UPPER') };
  if (padding === 'VALID') return { auto_pad: str('VALID') };
  if (padding === 'EXPLICIT') {
    const p = attrInts(node, 'explicit_paddings');
    return { pads: ints([p[2], p[4], p[3], p[5]]) };
  }
  throw new Error(`node ${node.name} (${node.op}): unsupported padding ${padding}`);
}

function spatial(values: number[], fallback: number): number[] {
  return values.length === 4 ? [values[1], values[2]] : [fallback, fallback];
}

/** Runs an NCHW ONNX op on an NHWC tensor: Transpose in, op, Transpose out (ORT cancels adjacent pairs). */
function inNchw(ctx: ConversionContext, x: string, run: (nchw: string) => string): string {
  const nchw = ctx.g.op('Transpose', [x], { perm: ints(toNchw) });
  return ctx.g.op('Transpose', [run(nchw)], { perm: ints(toNhwc) });
}

function conv(depthwise: boolean, fused: boolean): OpHandler {
  return (node, ctx) => {
    checkNhwc(node);
    const weights = ctx.requireConst(node, 1, 'the filter');
    const [kh, kw, cin, cout] = weights.shape;
    // HWIO → OIHW; depthwise [H,W,C,M] → [C*M,1,H,W] with group=C (TF output channel c*M+m).
    const filter = depthwise
      ? { ...transposeConst(weights, [2, 3, 0, 1]), shape: [cin * cout, 1, kh, kw] }
      : transposeConst(weights, [3, 2, 0, 1]);
    const w = ctx.g.initializer(`${node.name}/filter_oihw`, filter.dtype, filter.shape, filter.data);
    const withBias = fused && hasFusedBias(node);
    const inputs = [w, ...(withBias ? [ctx.input(node, 2)] : [])];
    const attrs: Record<string, OnnxAttr> = {
      kernel_shape: ints([kh, kw]),
      strides: ints(spatial(attrInts(node, 'strides'), 1)),
      dilations: ints(spatial(attrInts(node, 'dilations'), 1)),
      group: int(depthwise ? cin : 1),
      ...paddingAttrs(node),
    };
    const y = inNchw(ctx, ctx.input(node, 0), (x) => ctx.g.op('Conv', [x, ...inputs], attrs));
    return [fused ? applyFusedTail(ctx, node, y, true) : y];
  };
}

function pool(onnxOp: 'MaxPool' | 'AveragePool'): OpHandler {
  return (node, ctx) => {
    checkNhwc(node);
    const attrs = {
      kernel_shape: ints(spatial(attrInts(node, 'ksize'), 1)),
      strides: ints(spatial(attrInts(node, 'strides'), 1)),
      ...paddingAttrs(node),
    };
    return [inNchw(ctx, ctx.input(node, 0), (x) => ctx.g.op(onnxOp, [x], attrs))];
  };
}

function resize(mode: 'linear' | 'nearest'): OpHandler {
  return (node, ctx) => {
    const alignCorners = attrBool(node, 'align_corners');
    const halfPixel = attrBool(node, 'half_pixel_centers');
    const attrs: Record<string, OnnxAttr> = { mode: str(mode) };
    if (mode === 'linear') {
      attrs.coordinate_transformation_mode = str(
        alignCorners ? 'align_corners' : halfPixel ? 'half_pixel' : 'asymmetric',
      );
    } else {
      attrs.coordinate_transformation_mode = str(
        alignCorners ? 'align_corners' : halfPixel ? 'tf_half_pixel_for_nn' : 'asymmetric',
      );
      attrs.nearest_mode = str(alignCorners ? 'round_prefer_ceil' : 'floor');
    }
    const size = ctx.int64Input(node, 1);
    return [
      inNchw(ctx, ctx.input(node, 0), (x) => {
        const batchAndChannels = ctx.g.op('Slice', [ctx.g.op('Shape', [x]), ctx.g.int64([0]), ctx.g.int64([2])]);
        const sizes = ctx.g.op('Concat', [batchAndChannels, size], { axis: int(0) });
        return ctx.g.op('Resize', [x, '', '', sizes], attrs);
      }),
    ];
  };
}

/** Convolution, pooling and resize ops (NHWC in TF, wrapped in Transposes around ONNX's NCHW ops). */
export const convOps: Record<string, OpHandler> = {
  Conv2D: conv(false, false),
  _FusedConv2D: conv(false, true),
  DepthwiseConv2dNative: conv(true, false),
  FusedDepthwiseConv2dNative: conv(true, true),
  MaxPool: pool('MaxPool'),
  AvgPool: pool('AveragePool'),
  ResizeBilinear: resize('linear'),
  ResizeNearestNeighbor: resize('nearest'),
};
