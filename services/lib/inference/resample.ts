import type { ImageInputSpec } from './manifest.js';
import type { RgbImage } from './roles.js';

/** Typed array matching a manifest input dtype. */
export type InputBuffer = Float32Array | Int32Array | Uint8Array;

/**
 * Averages each kx×ky block of pixels into one (the remainder columns/rows at the right/bottom edge are dropped, at
 * most kx-1 / ky-1 pixels). Used before bilinear sampling so large downscales do not alias.
 */
export function boxShrink(image: RgbImage, kx: number, ky: number): RgbImage {
  const width = Math.floor(image.width / kx);
  const height = Math.floor(image.height / ky);
  const src = image.data;
  const data = new Uint8Array(width * height * 3);
  const sums = new Uint32Array(width * 3);
  const rowStride = image.width * 3;
  const area = kx * ky;
  const half = area >> 1;
  for (let y = 0; y < height; y++) {
    sums.fill(0);
    for (let dy = 0; dy < ky; dy++) {
      let s = (y * ky + dy) * rowStride;
      for (let x = 0, o = 0; x < width; x++, o += 3) {
        let r = 0;
        let g = 0;
        let b = 0;
        for (let dx = 0; dx < kx; dx++, s += 3) {
          r += src[s];
          g += src[s + 1];
          b += src[s + 2];
        }
        sums[o] += r;
        sums[o + 1] += g;
        sums[o + 2] += b;
      }
    }
    const base = y * width * 3;
    for (let i = 0; i < width * 3; i++) data[base + i] = ((sums[i] + half) / area) | 0;
  }
  return { data, width, height };
}

/**
 * Bilinearly resamples `image` (half-pixel centres, edge-clamped) to `width`×`height` and writes it, normalised per
 * the spec (`(pixel*scale - mean)/std`, rounded for integer dtypes), at the top-left of input slot `index`; the rest
 * of the slot gets the value of a black pixel. `fx`/`fy`: source pixels per output pixel (differ from the size ratio
 * when `image` was box-shrunk from a larger source). One pass, no intermediate image.
 */
export function writeResampled(
  image: RgbImage,
  width: number,
  height: number,
  spec: ImageInputSpec,
  out: InputBuffer,
  index: number,
  fx = image.width / width,
  fy = image.height / height,
): void {
  const inW = spec.width;
  const inH = spec.height;
  const plane = inW * inH;
  const base = index * plane * 3;
  const nhwc = spec.layout === 'NHWC';
  const round = spec.dtype !== 'float32';
  const clampByte = spec.dtype === 'uint8';
  const gain = [0, 1, 2].map((c) => spec.scale / spec.std[c]);
  const offset = [0, 1, 2].map((c) => -spec.mean[c] / spec.std[c]);
  const cast = (v: number) => (clampByte ? Math.min(255, Math.max(0, Math.round(v))) : round ? Math.round(v) : v);
  const pad = offset.map(cast);

  if (width < inW || height < inH) {
    if (nhwc) {
      for (let i = base, end = base + plane * 3; i < end; i += 3) {
        out[i] = pad[0];
        out[i + 1] = pad[1];
        out[i + 2] = pad[2];
      }
    } else {
      for (let c = 0; c < 3; c++) out.fill(pad[c], base + c * plane, base + (c + 1) * plane);
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
    const sx = Math.min(srcW - 1, Math.max(0, (x + 0.5) * fx - 0.5));
    const x0 = Math.floor(sx);
    left[x] = x0 * 3;
    right[x] = Math.min(srcW - 1, x0 + 1) * 3;
    wxs[x] = sx - x0;
  }
  const [g0, g1, g2] = gain;
  const [o0, o1, o2] = offset;
  for (let y = 0; y < height; y++) {
    const sy = Math.min(srcH - 1, Math.max(0, (y + 0.5) * fy - 0.5));
    const y0 = Math.floor(sy);
    const wy = sy - y0;
    const top = y0 * srcW * 3;
    const bottom = Math.min(srcH - 1, y0 + 1) * srcW * 3;
    let dst = nhwc ? base + y * inW * 3 : base + y * inW;
    for (let x = 0; x < width; x++) {
      const wx = wxs[x];
      const tl = top + left[x];
      const tr = top + right[x];
      const bl = bottom + left[x];
      const br = bottom + right[x];
      let t = src[tl] + (src[tr] - src[tl]) * wx;
      let b = src[bl] + (src[br] - src[bl]) * wx;
      const r = t + (b - t) * wy;
      t = src[tl + 1] + (src[tr + 1] - src[tl + 1]) * wx;
      b = src[bl + 1] + (src[br + 1] - src[bl + 1]) * wx;
      const g = t + (b - t) * wy;
      t = src[tl + 2] + (src[tr + 2] - src[tl + 2]) * wx;
      b = src[bl + 2] + (src[br + 2] - src[bl + 2]) * wx;
      const bl2 = t + (b - t) * wy;
      if (nhwc) {
        out[dst] = round ? cast(r * g0 + o0) : r * g0 + o0;
        out[dst + 1] = round ? cast(g * g1 + o1) : g * g1 + o1;
        out[dst + 2] = round ? cast(bl2 * g2 + o2) : bl2 * g2 + o2;
        dst += 3;
      } else {
        out[dst] = round ? cast(r * g0 + o0) : r * g0 + o0;
        out[dst + plane] = round ? cast(g * g1 + o1) : g * g1 + o1;
        out[dst + 2 * plane] = round ? cast(bl2 * g2 + o2) : bl2 * g2 + o2;
        dst++;
      }
    }
  }
}
