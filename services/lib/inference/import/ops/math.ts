import type { OpHandler } from '../conversion-context.js';
import { int, ints, str } from '../onnx-writer.js';
import { attrBool } from '../tf-attrs.js';
import { applyFusedTail } from './elementwise.js';

function reduce(onnxOp: string): OpHandler {
  return (node, ctx) => {
    const axes = ctx.constValues(node, 1, 'reduction axes');
    if (!axes.length) throw new Error(`node ${node.name} (${node.op}): empty reduction axes are not supported`);
    const keepdims = int(attrBool(node, 'keep_dims') ? 1 : 0);
    // Opset 13 takes ReduceSum axes as an input and the others as an attribute.
    if (onnxOp === 'ReduceSum') return [ctx.g.op(onnxOp, [ctx.input(node, 0), ctx.g.int64(axes)], { keepdims })];
    return [ctx.g.op(onnxOp, [ctx.input(node, 0)], { axes: ints(axes), keepdims })];
  };
}

const matMul: OpHandler = (node, ctx) => {
  const transpose = (i: number, flag: string): string => {
    const x = ctx.input(node, i);
    return attrBool(node, flag) ? ctx.g.op('Transpose', [x], { perm: ints([1, 0]) }) : x;
  };
  const y = ctx.g.op('MatMul', [transpose(0, 'transpose_a'), transpose(1, 'transpose_b')]);
  return [node.op === '_FusedMatMul' ? applyFusedTail(ctx, node, y, false) : y];
};

/** BatchMatMul's adjoint flags transpose the last two axes of an operand of any rank: Einsum with an ellipsis. */
const batchMatMul: OpHandler = (node, ctx) => {
  const adjX = attrBool(node, 'adj_x');
  const adjY = attrBool(node, 'adj_y');
  const a = ctx.input(node, 0);
  const b = ctx.input(node, 1);
  if (!adjX && !adjY) return [ctx.g.op('MatMul', [a, b])];
  const equation = `...${adjX ? 'ji' : 'ij'},...${adjY ? 'kj' : 'jk'}->...ik`;
  return [ctx.g.op('Einsum', [a, b], { equation: str(equation) })];
};

/** Reductions and matrix products. */
export const mathOps: Record<string, OpHandler> = {
  Mean: reduce('ReduceMean'),
  Max: reduce('ReduceMax'),
  Min: reduce('ReduceMin'),
  Sum: reduce('ReduceSum'),
  Prod: reduce('ReduceProd'),
  MatMul: matMul,
  _FusedMatMul: matMul,
  BatchMatMul: batchMatMul,
  BatchMatMulV2: batchMatMul,
};
