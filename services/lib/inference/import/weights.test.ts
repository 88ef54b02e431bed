import { describe, expect, it } from '@jest/globals';
import { float16ToFloat32 } from './float16.js';
import type { WeightSpec } from './tfjs-model.js';
import { decodeWeights } from './weights.js';

function bytes(...arrays: ArrayBufferView[]): Uint8Array {
  return new Uint8Array(Buffer.concat(arrays.map((a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength))));
}

describe('float16 decoding', () => {
  it('decodes normal, subnormal, signed, infinite and NaN halves', () => {
    const halves = Uint16Array.of(0x3c00, 0xc000, 0x7bff, 0x0001, 0x3555, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00);
    const values = float16ToFloat32(halves);
    expect(Array.from(values.subarray(0, 3))).toEqual([1, -2, 65504]);
    expect(values[3]).toBe(2 ** -24);
    expect(values[4]).toBeCloseTo(0.333, 3);
    expect(Object.is(values[6], -0)).toBe(true);
    expect(values[7]).toBe(Infinity);
    expect(values[8]).toBe(-Infinity);
    expect(values[9]).toBeNaN();
  });
});

describe('decodeWeights', () => {
  it('walks weights in manifest order across plain and quantised encodings', () => {
    const specs: WeightSpec[] = [
      { name: 'f32', shape: [2], dtype: 'float32' },
      { name: 'u8', shape: [3], dtype: 'float32', quantization: { dtype: 'uint8', min: -1, scale: 0.5 } },
      { name: 'f16', shape: [2], dtype: 'float32', quantization: { dtype: 'float16', original_dtype: 'float32' } },
      { name: 'u16', shape: [2], dtype: 'float32', quantization: { dtype: 'uint16', min: 10, scale: 0.25 } },
      { name: 'i32', shape: [1, 2], dtype: 'int32' },
      { name: 'qint', shape: [2], dtype: 'int32', quantization: { dtype: 'uint8', min: 0.4, scale: 1.5 } },
      { name: 'flag', shape: [2], dtype: 'bool' },
    ];
    const data = bytes(
      Float32Array.of(1.5, -2.25),
      Uint8Array.of(0, 2, 255),
      Uint16Array.of(0x3c00, 0xc000),
      Uint16Array.of(0, 65535),
      Int32Array.of(-7, 123456),
      Uint8Array.of(1, 3),
      Uint8Array.of(1, 0),
    );
    const weights = decodeWeights(specs, data);
    expect(Array.from(weights.get('f32')!.data)).toEqual([1.5, -2.25]);
    expect(Array.from(weights.get('u8')!.data)).toEqual([-1, 0, 126.5]);
    expect(Array.from(weights.get('f16')!.data)).toEqual([1, -2]);
    expect(Array.from(weights.get('u16')!.data)).toEqual([10, 10 + 65535 * 0.25]);
    expect(weights.get('i32')).toMatchObject({ dtype: 'int32', shape: [1, 2] });
    expect(Array.from(weights.get('i32')!.data)).toEqual([-7, 123456]);
    // Quantised int32 weights are rounded, as TFJS does: 1*1.5+0.4=1.9 → 2, 3*1.5+0.4=4.9 → 5.
    expect(Array.from(weights.get('qint')!.data)).toEqual([2, 5]);
    expect(weights.get('flag')).toMatchObject({ dtype: 'bool' });
    expect(Array.from(weights.get('flag')!.data)).toEqual([1, 0]);
  });

  it('fails clearly when the shards are shorter than the manifest', () => {
    const specs: WeightSpec[] = [{ name: 'w', shape: [4], dtype: 'float32' }];
    expect(() => decodeWeights(specs, new Uint8Array(8))).toThrow(/shorter than its manifest/);
  });

  it('refuses unknown quantisation types', () => {
    const specs = [
      { name: 'w', shape: [1], dtype: 'float32', quantization: { dtype: 'int4' } },
    ] as unknown as WeightSpec[];
    expect(() => decodeWeights(specs, new Uint8Array(8))).toThrow(/unsupported quantisation int4/);
  });
});
