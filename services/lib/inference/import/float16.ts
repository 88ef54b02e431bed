/** Converts IEEE 754 half-precision bit patterns to float32 values. */
export function float16ToFloat32(halves: Uint16Array): Float32Array {
  const out = new Float32Array(halves.length);
  for (let i = 0; i < halves.length; i++) {
    const h = halves[i];
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const fraction = h & 0x03ff;
    if (exponent === 0) out[i] = sign * 2 ** -14 * (fraction / 1024);
    else if (exponent === 0x1f) out[i] = fraction ? NaN : sign * Infinity;
    else out[i] = sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
  }
  return out;
}
