import sharp from 'sharp';
import { placeImage } from './image-tensor.js';
import type { ImageEmbedder, ImageInputGeometry, ModelCallOptions, RgbImage } from './roles.js';

/**
 * How an image becomes the vector stored and searched (image→image search), over one image embedder:
 *
 * - `global-v1`: the embedder's vector of the image as given (its own bilinear resize to the model input).
 * - `lowpass-v2`: the image is first brought to the model's input size by libvips (antialiased at any reduction),
 *   then blurred with σ = LOWPASS_SIGMA input pixels, and only then embedded. Both steps remove the fine detail that
 *   a copy's blur, rescaling or re-encoding changes, so a changed copy and its original land closer together.
 *
 * Vectors of different descriptors are not comparable: records carry the name of theirs (`image_descriptor`).
 */
export type ImageDescriptorName = 'global-v1' | 'lowpass-v2';

/** Every descriptor, oldest first. */
export const IMAGE_DESCRIPTORS: readonly ImageDescriptorName[] = ['global-v1', 'lowpass-v2'];

/** The descriptor new vectors are written with. */
export const CURRENT_IMAGE_DESCRIPTOR: ImageDescriptorName = 'lowpass-v2';

/** Blur of `lowpass-v2`, in model-input pixels (measured by `npm run bench search-quality` on the tuning split). */
const LOWPASS_SIGMA = 0.8;

/** Input of the default image embedder (MobileNetV2 1.4, 224×224 stretched), for embedders that do not say theirs. */
const DEFAULT_INPUT_GEOMETRY: ImageInputGeometry = { width: 224, height: 224, resize: 'stretch' };

/** An image embedder seen through one descriptor: the vectors it answers are in that descriptor's space. */
export interface ImageDescriptor extends ImageEmbedder {
  readonly descriptor: ImageDescriptorName;
}

/** `embedder` seen through descriptor `name`. */
export function imageDescriptor(embedder: ImageEmbedder, name: ImageDescriptorName): ImageDescriptor {
  const geometry = embedder.input ?? DEFAULT_INPUT_GEOMETRY;
  return {
    descriptor: name,
    get info() {
      return embedder.info;
    },
    dimension: embedder.dimension,
    input: embedder.input,
    embed:
      name === 'global-v1'
        ? (images: RgbImage[], options?: ModelCallOptions) => embedder.embed(images, options)
        : async (images: RgbImage[], options?: ModelCallOptions) =>
            embedder.embed(await Promise.all(images.map((image) => lowPass(image, geometry))), options),
  };
}

/**
 * The image at the size the model input takes it (per `geometry.resize`: the whole input for `stretch`, the fitted
 * box for `letterbox`, the short side on the input for `center-crop`), resized by libvips and blurred by
 * LOWPASS_SIGMA; the embedder then samples it one to one.
 */
export async function lowPass(image: RgbImage, geometry: ImageInputGeometry): Promise<RgbImage> {
  const { scaleX, scaleY } = placeImage(image.width, image.height, geometry);
  const width = Math.max(1, Math.round(image.width * scaleX));
  const height = Math.max(1, Math.round(image.height * scaleY));
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(width, height, { fit: 'fill' })
    .blur(LOWPASS_SIGMA)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
}
