import sharp from 'sharp';
import type { ImageInputSpec } from './manifest.js';
import type { RgbImage } from './roles.js';

/**
 * Where a source image lands in the model input: scaled by (scaleX, scaleY) into a `width`×`height` region at the
 * top-left of the input (the rest is padding for letterbox). Input px = source px × scale.
 */
export interface InputPlacement {
  width: number;
  height: number;
  scaleX: number;
  scaleY: number;
}

/** Typed array matching a manifest input dtype. */
export type InputBuffer = Float32Array | Int32Array | Uint8Array;

/** Computes the resize for a source image per the spec's `stretch` or `letterbox` (top-left aligned) mode. */
export function placeImage(sourceWidth: number, sourceHeight: number, spec: ImageInputSpec): InputPlacement {
  if (spec.resize === 'stretch') {
    return {
      width: spec.width,
      height: spec.height,
      scaleX: spec.width / sourceWidth,
      scaleY: spec.height / sourceHeight,
    };
  }
  const scale = Math.min(spec.width / sourceWidth, spec.height / sourceHeight);
  const width = Math.min(spec.width, Math.max(1, Math.round(sourceWidth * scale)));
  const height = Math.min(spec.height, Math.max(1, Math.round(sourceHeight * scale)));
  // The rounded size is what the pixels really occupy, so map coordinates with it, not with `scale`.
  return { width, height, scaleX: width / sourceWidth, scaleY: height / sourceHeight };
}

/** Maps a point in model-input pixels back to source-image pixels. */
export function toSourcePoint(x: number, y: number, placement: InputPlacement): [number, number] {
  return [x / placement.scaleX, y / placement.scaleY];
}

/** Resizes packed RGB to exactly `width`×`height` (bilinear, sharp/libvips), returning packed RGB. */
export async function resizeRgb(image: RgbImage, width: number, height: number): Promise<Uint8Array> {
  if (image.width === width && image.height === height) return image.data;
  const out = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

/** Allocates the input buffer for `batch` images of the spec. */
export function allocateInput(spec: ImageInputSpec, batch: number): InputBuffer {
  const size = batch * spec.width * spec.height * 3;
  if (spec.dtype === 'float32') return new Float32Array(size);
  if (spec.dtype === 'int32') return new Int32Array(size);
  return new Uint8Array(size);
}

/** Per-channel lookup table: normalised value of each 0–255 pixel value, already cast for integer dtypes. */
export function pixelLookup(spec: ImageInputSpec): Float32Array {
  const table = new Float32Array(768);
  for (let c = 0; c < 3; c++) {
    for (let p = 0; p < 256; p++) {
      let value = (p * spec.scale - spec.mean[c]) / spec.std[c];
      if (spec.dtype === 'int32') value = Math.round(value);
      if (spec.dtype === 'uint8') value = Math.min(255, Math.max(0, Math.round(value)));
      table[c * 256 + p] = value;
    }
  }
  return table;
}

/**
 * Writes one resized image (`placement.width`×`placement.height` packed RGB) into slot `index` of a batch input,
 * padding the rest of the input with the value of a black pixel.
 */
export function writeInput(
  pixels: Uint8Array,
  placement: InputPlacement,
  spec: ImageInputSpec,
  lookup: Float32Array,
  out: InputBuffer,
  index: number,
): void {
  const { width: inW, height: inH } = spec;
  const plane = inW * inH;
  const base = index * plane * 3;
  const w = placement.width;
  const h = placement.height;
  const padded = w < inW || h < inH;
  if (spec.layout === 'NHWC') {
    if (padded) {
      for (let i = base, end = base + plane * 3; i < end; i += 3) {
        out[i] = lookup[0];
        out[i + 1] = lookup[256];
        out[i + 2] = lookup[512];
      }
    }
    for (let y = 0; y < h; y++) {
      let src = y * w * 3;
      let dst = base + y * inW * 3;
      for (let x = 0; x < w; x++, src += 3, dst += 3) {
        out[dst] = lookup[pixels[src]];
        out[dst + 1] = lookup[256 + pixels[src + 1]];
        out[dst + 2] = lookup[512 + pixels[src + 2]];
      }
    }
    return;
  }
  const r = base;
  const g = base + plane;
  const b = base + 2 * plane;
  if (padded) {
    out.fill(lookup[0], r, r + plane);
    out.fill(lookup[256], g, g + plane);
    out.fill(lookup[512], b, b + plane);
  }
  for (let y = 0; y < h; y++) {
    let src = y * w * 3;
    let dst = y * inW;
    for (let x = 0; x < w; x++, src += 3, dst++) {
      out[r + dst] = lookup[pixels[src]];
      out[g + dst] = lookup[256 + pixels[src + 1]];
      out[b + dst] = lookup[512 + pixels[src + 2]];
    }
  }
}

/** Resizes and writes one source image into slot `index` of a batch input; returns where it landed. */
export async function prepareImage(
  image: RgbImage,
  spec: ImageInputSpec,
  lookup: Float32Array,
  out: InputBuffer,
  index: number,
): Promise<InputPlacement> {
  const placement = placeImage(image.width, image.height, spec);
  const pixels = await resizeRgb(image, placement.width, placement.height);
  writeInput(pixels, placement, spec, lookup, out, index);
  return placement;
}
