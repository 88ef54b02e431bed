import { float16ToFloat32 } from './float16.js';
import type { ConstTensor, WeightSpec } from './tfjs-model.js';

const quantizedBytes = { uint8: 1, uint16: 2, float16: 2 } as const;
const plainBytes: Record<string, number> = { float32: 4, int32: 4, bool: 1 };

function copyBytes(data: Uint8Array, offset: number, length: number): ArrayBuffer {
  if (offset + length > data.byteLength) throw new Error('weight data is shorter than its manifest says');
  return data.slice(offset, offset + length).buffer;
}

function decodeQuantized(spec: WeightSpec, bytes: ArrayBuffer, size: number): ConstTensor {
  const q = spec.quantization!;
  if (q.dtype === 'float16') {
    if (spec.dtype !== 'float32') throw new Error(`weight ${spec.name}: float16 quantisation of ${spec.dtype}`);
    return { dtype: 'float32', shape: spec.shape, data: float16ToFloat32(new Uint16Array(bytes, 0, size)) };
  }
  if (q.min === undefined || q.scale === undefined)
    throw new Error(`weight ${spec.name}: quantisation lacks min/scale`);
  const raw = q.dtype === 'uint8' ? new Uint8Array(bytes, 0, size) : new Uint16Array(bytes, 0, size);
  if (spec.dtype === 'int32') {
    const data = new Int32Array(size);
    for (let i = 0; i < size; i++) data[i] = Math.round(raw[i] * q.scale + q.min);
    return { dtype: 'int32', shape: spec.shape, data };
  }
  const data = new Float32Array(size);
  for (let i = 0; i < size; i++) data[i] = raw[i] * q.scale + q.min;
  return { dtype: 'float32', shape: spec.shape, data };
}

/**
 * Decodes every weight in manifest order from the concatenated shard bytes, undoing float16 and uint8/uint16
 * affine quantisation exactly as TFJS does (`q * scale + min`, rounded for int32).
 */
export function decodeWeights(specs: WeightSpec[], data: Uint8Array): Map<string, ConstTensor> {
  const out = new Map<string, ConstTensor>();
  let offset = 0;
  for (const spec of specs) {
    const size = spec.shape.reduce((a, b) => a * b, 1);
    if (spec.quantization) {
      const width = quantizedBytes[spec.quantization.dtype];
      if (!width) throw new Error(`weight ${spec.name}: unsupported quantisation ${spec.quantization.dtype}`);
      out.set(spec.name, decodeQuantized(spec, copyBytes(data, offset, size * width), size));
      offset += size * width;
      continue;
    }
    const width = plainBytes[spec.dtype];
    if (!width) throw new Error(`weight ${spec.name}: unsupported dtype ${spec.dtype}`);
    const bytes = copyBytes(data, offset, size * width);
    const values =
      spec.dtype === 'float32'
        ? new Float32Array(bytes)
        : spec.dtype === 'int32'
          ? new Int32Array(bytes)
          : new Uint8Array(bytes);
    out.set(spec.name, { dtype: spec.dtype as ConstTensor['dtype'], shape: spec.shape, data: values });
    offset += size * width;
  }
  return out;
}
