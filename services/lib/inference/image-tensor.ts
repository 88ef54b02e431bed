import type { ImageInputSpec } from './manifest.js';
import type { RgbImage } from './roles.js';
import { boxShrink, writeResampled, type InputBuffer } from './resample.js';

export type { InputBuffer } from './resample.js';

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

/** Block size is floor(reduction / this): reductions below 3× are left to bilinear sampling alone. */
const BILINEAR_MAX_REDUCTION = 1.5;

/** Allocates the input buffer for `batch` images of the spec. */
export function allocateInput(spec: ImageInputSpec, batch: number): InputBuffer {
  const size = batch * spec.width * spec.height * 3;
  if (spec.dtype === 'float32') return new Float32Array(size);
  if (spec.dtype === 'int32') return new Int32Array(size);
  return new Uint8Array(size);
}

/**
 * Resizes one source image per the spec and writes it, normalised, into slot `index` of a batch input; returns where
 * it landed. Samples bilinearly like the TFJS pipelines the default models come from (tf.image.resizeBilinear);
 * reductions beyond 1.5×2 first average whole pixel blocks so large frames do not alias.
 */
export function prepareImage(image: RgbImage, spec: ImageInputSpec, out: InputBuffer, index: number): InputPlacement {
  const placement = placeImage(image.width, image.height, spec);
  // Past 3× reduction, average k×k blocks first so the reduction left to bilinear stays under 3×.
  const kx = Math.max(1, Math.floor(image.width / placement.width / BILINEAR_MAX_REDUCTION));
  const ky = Math.max(1, Math.floor(image.height / placement.height / BILINEAR_MAX_REDUCTION));
  const source = kx > 1 || ky > 1 ? boxShrink(image, kx, ky) : image;
  // Sampling positions stay relative to the full source, so the shrink's dropped edge pixels shift nothing.
  const fx = image.width / (kx * placement.width);
  const fy = image.height / (ky * placement.height);
  writeResampled(source, placement.width, placement.height, spec, out, index, fx, fy);
  return placement;
}
