import type { ImageInputSpec } from './manifest.js';
import type { RgbImage } from './roles.js';
import sharp from 'sharp';
import { writeResampled, type InputBuffer } from './resample.js';

export type { InputBuffer } from './resample.js';

/**
 * Where a source image lands in the model input: scaled by (scaleX, scaleY), shifted by (offsetX, offsetY) (non-zero
 * only for `center-crop`), filling a `width`×`height` region at the top-left of the input (the rest is letterbox
 * padding). Input px = source px × scale − offset.
 */
export interface InputPlacement {
  width: number;
  height: number;
  scaleX: number;
  scaleY: number;
  offsetX?: number;
  offsetY?: number;
}

/**
 * Computes the resize for a source image per the spec: `stretch`, `letterbox` (top-left aligned) or `center-crop`
 * (scale the short side to fit, crop the middle, as CLIP preprocessing does).
 */
export function placeImage(
  sourceWidth: number,
  sourceHeight: number,
  spec: Pick<ImageInputSpec, 'width' | 'height' | 'resize'>,
): InputPlacement {
  if (spec.resize === 'stretch') {
    return {
      width: spec.width,
      height: spec.height,
      scaleX: spec.width / sourceWidth,
      scaleY: spec.height / sourceHeight,
    };
  }
  if (spec.resize === 'center-crop') {
    const scale = Math.max(spec.width / sourceWidth, spec.height / sourceHeight);
    const resizedWidth = Math.max(spec.width, Math.round(sourceWidth * scale));
    const resizedHeight = Math.max(spec.height, Math.round(sourceHeight * scale));
    return {
      width: spec.width,
      height: spec.height,
      scaleX: resizedWidth / sourceWidth,
      scaleY: resizedHeight / sourceHeight,
      offsetX: Math.floor((resizedWidth - spec.width) / 2),
      offsetY: Math.floor((resizedHeight - spec.height) / 2),
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
  return [(x + (placement.offsetX ?? 0)) / placement.scaleX, (y + (placement.offsetY ?? 0)) / placement.scaleY];
}

/**
 * Reductions from this factor up go through libvips (antialiased, SIMD); below it one JS bilinear pass is cheaper and
 * aliasing stays mild (2×2 taps per ≤4×4 footprint, what tf.image.resizeBilinear does at any factor).
 */
const LIBVIPS_MIN_REDUCTION = 4;

/**
 * Reuses input buffers between runs of one model: a batch input is megabytes, and allocating (zero-filling) one per
 * call costs about as much as preprocessing. Buffers are handed out exclusively, so concurrent runs stay safe.
 */
export class InputBufferPool {
  /** Idle buffers, most recently released last; at most MAX_IDLE_BUFFERS so odd batch sizes cannot hoard memory. */
  private readonly idle: InputBuffer[] = [];

  constructor(private readonly spec: ImageInputSpec) {}

  /** A buffer for `batch` images; its previous contents are overwritten by `prepareImage`. */
  acquire(batch: number): InputBuffer {
    const length = batch * this.spec.width * this.spec.height * 3;
    const i = this.idle.findIndex((buffer) => buffer.length === length);
    return i >= 0 ? this.idle.splice(i, 1)[0] : allocateInput(this.spec, batch);
  }

  /** Returns a buffer once the session run that read it has finished. */
  release(buffer: InputBuffer): void {
    this.idle.push(buffer);
    if (this.idle.length > MAX_IDLE_BUFFERS) this.idle.shift();
  }
}

/** Two idle buffers cover a run in flight plus one being prepared, at the batch size a caller keeps using. */
const MAX_IDLE_BUFFERS = 2;

/** Allocates the input buffer for `batch` images of the spec. */
export function allocateInput(spec: ImageInputSpec, batch: number): InputBuffer {
  const size = batch * spec.width * spec.height * 3;
  if (spec.dtype === 'float32') return new Float32Array(size);
  if (spec.dtype === 'int32') return new Int32Array(size);
  return new Uint8Array(size);
}

/**
 * Resizes one source image per the spec and writes it, normalised, into slot `index` of a batch input; returns where
 * it landed. Reductions under 4× are sampled bilinearly in one JS pass, like the TFJS pipelines the default models
 * come from (tf.image.resizeBilinear); larger ones are first resized by libvips so big frames do not alias.
 */
export async function prepareImage(
  image: RgbImage,
  spec: ImageInputSpec,
  out: InputBuffer,
  index: number,
): Promise<InputPlacement> {
  if (!(image.width >= 1 && image.height >= 1) || image.data.length !== image.width * image.height * 3) {
    throw new RangeError(`image ${image.width}×${image.height} needs ${image.width * image.height * 3} RGB bytes`);
  }
  const placement = placeImage(image.width, image.height, spec);
  const { width, height, scaleX, scaleY, offsetX = 0, offsetY = 0 } = placement;
  // The full scaled image; for center-crop only its middle `width`×`height` is written.
  const scaledWidth = Math.round(image.width * scaleX);
  const scaledHeight = Math.round(image.height * scaleY);
  const reduction = Math.max(image.width / scaledWidth, image.height / scaledHeight);
  const source = reduction >= LIBVIPS_MIN_REDUCTION ? await resizeRgb(image, scaledWidth, scaledHeight) : image;
  const window = { width, height, fx: source.width / scaledWidth, fy: source.height / scaledHeight, offsetX, offsetY };
  writeResampled(source, window, spec, out, index);
  return placement;
}

/** Resizes packed RGB to exactly `width`×`height` with libvips (linear kernel, antialiased when reducing). */
export async function resizeRgb(image: RgbImage, width: number, height: number): Promise<RgbImage> {
  const data = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width, height };
}
