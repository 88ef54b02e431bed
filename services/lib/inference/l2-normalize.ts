/** Returns a copy of `values[offset, offset+length)` scaled to unit L2 norm (a zero vector stays zero). */
export function l2Normalize(values: ArrayLike<number>, offset = 0, length = values.length - offset): Float32Array {
  const out = new Float32Array(length);
  let sum = 0;
  for (let i = 0; i < length; i++) {
    const v = values[offset + i];
    out[i] = v;
    sum += v * v;
  }
  if (sum > 0) {
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < length; i++) out[i] *= inv;
  }
  return out;
}

/** Cosine similarity of two L2-normalised vectors (their dot product). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot;
}
