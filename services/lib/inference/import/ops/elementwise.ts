import type { ConversionContext, OpHandler } from '../conversion-context.js';
import { float, int } from '../onnx-writer.js';
import { attrDType, attrFloat, attrStrings } from '../tf-attrs.js';
import type { TfNode } from '../tfjs-model.js';

const onnxTypeCode = { float32: 1, int32: 6, bool: 9 } as const;

function unary(onnxOp: string): OpHandler {
  return (node, ctx) => [ctx.g.op(onnxOp, [ctx.input(node, 0)])];
}

function binary(onnxOp: string): OpHandler {
  return (node, ctx) => [ctx.g.op(onnxOp, [ctx.input(node, 0), ctx.input(node, 1)])];
}

function relu6(ctx: ConversionContext, x: string): string {
  return ctx.g.op('Clip', [x, ctx.g.scalar('float32', 0), ctx.g.scalar('float32', 6)]);
}

/**
 * Applies a TF activation by name (as used standalone and in fused ops); `alpha` is the Prelu slope tensor.
 * Returns undefined for a name that is not an activation.
 */
export function applyActivation(ctx: ConversionContext, node: TfNode, kind: string, x: string, alpha?: string): string {
  switch (kind) {
    case 'Relu':
      return ctx.g.op('Relu', [x]);
    case 'Relu6':
      return relu6(ctx, x);
    case 'Sigmoid':
      return ctx.g.op('Sigmoid', [x]);
    case 'Tanh':
      return ctx.g.op('Tanh', [x]);
    case 'Elu':
      return ctx.g.op('Elu', [x]);
    case 'LeakyRelu':
      return ctx.g.op('LeakyRelu', [x], { alpha: float(attrFloat(node, 'leakyrelu_alpha', 0.2)) });
    case 'Prelu':
      if (!alpha) throw new Error(`node ${node.name}: Prelu without alpha`);
      return ctx.g.op('PRelu', [x, alpha]);
    default:
      throw new Error(`node ${node.name} (${node.op}): unsupported fused op ${kind}`);
  }
}

/**
 * Applies a fused op's tail (`fused_ops`: BiasAdd then an activation) to `y`; `skipBias` when the bias was already
 * folded into the main op (Conv's B input). Extra inputs start at index 2: bias, then Prelu alpha.
 */
export function applyFusedTail(ctx: ConversionContext, node: TfNode, y: string, skipBias: boolean): string {
  const fused = attrStrings(node, 'fused_ops');
  let out = y;
  for (const kind of fused) {
    if (kind === 'BiasAdd') {
      if (!skipBias) out = ctx.g.op('Add', [out, ctx.input(node, 2)]);
      continue;
    }
    const alpha = kind === 'Prelu' ? ctx.input(node, 3) : undefined;
    out = applyActivation(ctx, node, kind, out, alpha);
  }
  return out;
}

/** Whether a fused op carries a bias (its `fused_ops` starts with BiasAdd). */
export function hasFusedBias(node: TfNode): boolean {
  const fused = attrStrings(node, 'fused_ops');
  if (fused.some((f) => f.startsWith('FusedBatchNorm'))) {
    throw new Error(`node ${node.name} (${node.op}): fused batch norm is not supported`);
  }
  return fused[0] === 'BiasAdd';
}

/** TF FloorDiv: ints via (a - mod(a, b)) / b (ONNX Div truncates), floats via Floor(a / b). */
const floorDiv: OpHandler = (node, ctx) => {
  const a = ctx.input(node, 0);
  const b = ctx.input(node, 1);
  if (ctx.inputDType(node, 0) === 'float32') return [ctx.g.op('Floor', [ctx.g.op('Div', [a, b])])];
  const remainder = ctx.g.op('Mod', [a, b], { fmod: int(0) });
  return [ctx.g.op('Div', [ctx.g.op('Sub', [a, remainder]), b])];
};

/** TF FloorMod: result has the divisor's sign (ONNX Mod fmod=0 for ints; a - floor(a/b)*b for floats). */
const floorMod: OpHandler = (node, ctx) => {
  const a = ctx.input(node, 0);
  const b = ctx.input(node, 1);
  if (ctx.inputDType(node, 0) !== 'float32') return [ctx.g.op('Mod', [a, b], { fmod: int(0) })];
  const quotient = ctx.g.op('Floor', [ctx.g.op('Div', [a, b])]);
  return [ctx.g.op('Sub', [a, ctx.g.op('Mul', [quotient, b])])];
};

/** Element-wise, activation and cast ops. */
export const elementwiseOps: Record<string, OpHandler> = {
  Add: binary('Add'),
  AddV2: binary('Add'),
  BiasAdd: binary('Add'),
  Sub: binary('Sub'),
  Mul: binary('Mul'),
  RealDiv: binary('Div'),
  Div: binary('Div'),
  Maximum: binary('Max'),
  Minimum: binary('Min'),
  Pow: binary('Pow'),
  Less: binary('Less'),
  LessEqual: binary('LessOrEqual'),
  Greater: binary('Greater'),
  GreaterEqual: binary('GreaterOrEqual'),
  Equal: binary('Equal'),
  NotEqual: (node, ctx) => [ctx.g.op('Not', [ctx.g.op('Equal', [ctx.input(node, 0), ctx.input(node, 1)])])],
  LogicalAnd: binary('And'),
  LogicalOr: binary('Or'),
  LogicalNot: unary('Not'),
  FloorDiv: floorDiv,
  FloorMod: floorMod,
  SquaredDifference: (node, ctx) => {
    const d = ctx.g.op('Sub', [ctx.input(node, 0), ctx.input(node, 1)]);
    return [ctx.g.op('Mul', [d, d])];
  },
  Square: (node, ctx) => [ctx.g.op('Mul', [ctx.input(node, 0), ctx.input(node, 0)])],
  Rsqrt: (node, ctx) => [ctx.g.op('Reciprocal', [ctx.g.op('Sqrt', [ctx.input(node, 0)])])],
  Reciprocal: unary('Reciprocal'),
  AddN: (node, ctx) => [
    ctx.g.op(
      'Sum',
      ctx.dataInputs(node).map((_, i) => ctx.input(node, i)),
    ),
  ],
  Sqrt: unary('Sqrt'),
  Exp: unary('Exp'),
  Log: unary('Log'),
  Neg: unary('Neg'),
  Abs: unary('Abs'),
  Sign: unary('Sign'),
  Floor: unary('Floor'),
  Ceil: unary('Ceil'),
  Round: unary('Round'),
  Sin: unary('Sin'),
  Cos: unary('Cos'),
  Tanh: unary('Tanh'),
  Sigmoid: unary('Sigmoid'),
  Relu: unary('Relu'),
  Elu: unary('Elu'),
  Relu6: (node, ctx) => [relu6(ctx, ctx.input(node, 0))],
  LeakyRelu: (node, ctx) => [
    ctx.g.op('LeakyRelu', [ctx.input(node, 0)], { alpha: float(attrFloat(node, 'alpha', 0.2)) }),
  ],
  Prelu: (node, ctx) => [ctx.g.op('PRelu', [ctx.input(node, 0), ctx.input(node, 1)])],
  Softmax: (node, ctx) => [ctx.g.op('Softmax', [ctx.input(node, 0)], { axis: int(-1) })],
  LogSoftmax: (node, ctx) => [ctx.g.op('LogSoftmax', [ctx.input(node, 0)], { axis: int(-1) })],
  Identity: unary('Identity'),
  Select: (node, ctx) => [ctx.g.op('Where', [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)])],
  SelectV2: (node, ctx) => [ctx.g.op('Where', [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)])],
  Cast: (node, ctx) => {
    const to = attrDType(node, 'DstT');
    if (!to) throw new Error(`node ${node.name}: Cast without DstT`);
    return [ctx.g.op('Cast', [ctx.input(node, 0)], { to: int(onnxTypeCode[to]) })];
  },
};
