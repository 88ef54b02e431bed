import type { ConstTensor } from '../tfjs-model.js';

/** Permutes a constant's axes at conversion time (weights are re-laid out once instead of at every run). */
export function transposeConst(t: ConstTensor, perm: number[]): ConstTensor {
  const shape = perm.map((p) => t.shape[p]);
  const inStrides = t.shape.map((_, i) => t.shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const strides = perm.map((p) => inStrides[p]);
  const out = new (t.data.constructor as new (n: number) => typeof t.data)(t.data.length);
  const index = new Array(shape.length).fill(0);
  for (let o = 0; o < out.length; o++) {
    let source = 0;
    for (let d = 0; d < shape.length; d++) source += index[d] * strides[d];
    out[o] = t.data[source];
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return { dtype: t.dtype, shape, data: out };
}
