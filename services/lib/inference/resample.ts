import type { ImageInputSpec } from './manifest.js';
import type { RgbImage } from './roles.js';

/** Typed array matching a manifest input dtype. */
export type InputBuffer = Float32Array | Int32Array | Uint8Array;

/**
 * Which part of the scaled image is written: a `width`×`height` region starting at (`offsetX`, `offsetY`) of the
 * image scaled by 1/`fx`, 1/`fy` (source pixels per output pixel).
 */
export interface SampleWindow {
  width: number;
  height: number;
  fx: number;
  fy: number;
  offsetX: number;
  offsetY: number;
}

/**
 * Bilinearly resamples `image` (half-pixel centres, edge-clamped) over the window and writes it, normalised per
 * the spec (`(pixel*scale - mean)/std`, rounded for integer dtypes), at the top-left of input slot `index`; the rest
 * of the slot gets the value of a black pixel.
 */
export function writeResampled(
  image: RgbImage,
  window: SampleWindow,
  spec: ImageInputSpec,
  out: InputBuffer,
  index: number,
): void {
  const slot = spec.width * spec.height * 3;
  if (out instanceof Float32Array) {
    resampleFloat(image, window, spec, out.subarray(index * slot, (index + 1) * slot), 0);
    return;
  }
  // Integer inputs: resample in float (one monomorphic hot loop for every dtype), then let the engine's typed-array
  // conversion round: Uint8ClampedArray clamps and rounds; Int32 truncates, so non-negative values get +0.5 first.
  const scratch = floatScratch(slot);
  const base = index * slot;
  if (out instanceof Uint8Array) {
    resampleFloat(image, window, spec, scratch, 0);
    new Uint8ClampedArray(out.buffer, out.byteOffset, out.length).set(scratch, base);
    return;
  }
  const nonNegative = spec.scale >= 0 && [0, 1, 2].every((c) => spec.std[c] > 0 && spec.mean[c] <= 0);
  resampleFloat(image, window, spec, scratch, nonNegative ? 0.5 : 0);
  if (nonNegative) out.set(scratch, base);
  else for (let i = 0; i < slot; i++) out[base + i] = Math.round(scratch[i]);
}

let scratchBuffer = new Float32Array(0);

/** A reusable float buffer of `size` (resampling is synchronous, so one is enough). */
function floatScratch(size: number): Float32Array {
  if (scratchBuffer.length < size) scratchBuffer = new Float32Array(size);
  return scratchBuffer.subarray(0, size);
}

function resampleFloat(
  image: RgbImage,
  window: SampleWindow,
  spec: ImageInputSpec,
  out: Float32Array,
  bias: number,
): void {
  const { width, height, fx, fy, offsetX, offsetY } = window;
  const inW = spec.width;
  const plane = inW * spec.height;
  const nhwc = spec.layout === 'NHWC';
  const g0 = spec.scale / spec.std[0];
  const g1 = spec.scale / spec.std[1];
  const g2 = spec.scale / spec.std[2];
  const o0 = -spec.mean[0] / spec.std[0] + bias;
  const o1 = -spec.mean[1] / spec.std[1] + bias;
  const o2 = -spec.mean[2] / spec.std[2] + bias;

  if (width < inW || height < spec.height) {
    if (nhwc) {
      for (let i = 0; i < plane * 3; i += 3) {
        out[i] = o0;
        out[i + 1] = o1;
        out[i + 2] = o2;
      }
    } else {
      out.fill(o0, 0, plane);
      out.fill(o1, plane, 2 * plane);
      out.fill(o2, 2 * plane, 3 * plane);
    }
  }

  const src = image.data;
  const srcW = image.width;
  const srcH = image.height;
  // Per output column: byte offsets of the two source columns and the weight of the right one.
  const left = new Int32Array(width);
  const right = new Int32Array(width);
  const wxs = new Float32Array(width);
  for (let x = 0; x < width; x++) {
    const sx = Math.min(srcW - 1, Math.max(0, (x + offsetX + 0.5) * fx - 0.5));
    const x0 = Math.floor(sx);
    left[x] = x0 * 3;
    right[x] = Math.min(srcW - 1, x0 + 1) * 3;
    wxs[x] = sx - x0;
  }
  const step = nhwc ? 3 : 1;
  const c1 = nhwc ? 1 : plane;
  const c2 = nhwc ? 2 : 2 * plane;
  for (let y = 0; y < height; y++) {
    const sy = Math.min(srcH - 1, Math.max(0, (y + offsetY + 0.5) * fy - 0.5));
    const y0 = Math.floor(sy);
    const wy = sy - y0;
    const top = y0 * srcW * 3;
    const bottom = Math.min(srcH - 1, y0 + 1) * srcW * 3;
    let dst = y * inW * step;
    for (let x = 0; x < width; x++, dst += step) {
      const wx = wxs[x];
      const tl = top + left[x];
      const tr = top + right[x];
      const bl = bottom + left[x];
      const br = bottom + right[x];
      let t = src[tl] + (src[tr] - src[tl]) * wx;
      let b = src[bl] + (src[br] - src[bl]) * wx;
      out[dst] = (t + (b - t) * wy) * g0 + o0;
      t = src[tl + 1] + (src[tr + 1] - src[tl + 1]) * wx;
      b = src[bl + 1] + (src[br + 1] - src[bl + 1]) * wx;
      out[dst + c1] = (t + (b - t) * wy) * g1 + o1;
      t = src[tl + 2] + (src[tr + 2] - src[tl + 2]) * wx;
      b = src[bl + 2] + (src[br + 2] - src[bl + 2]) * wx;
      out[dst + c2] = (t + (b - t) * wy) * g2 + o2;
    }
  }
}
