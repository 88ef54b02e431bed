import type { Detection, RgbImage } from './roles.js';

/** Copies a detection's box out of the image (clamped to the image; at least 1×1 pixel), e.g. to embed the object. */
export function cropDetection(image: RgbImage, detection: Pick<Detection, 'box'>): RgbImage {
  const [bx1, by1, bx2, by2] = detection.box;
  const x1 = Math.min(image.width - 1, Math.max(0, Math.floor(bx1)));
  const y1 = Math.min(image.height - 1, Math.max(0, Math.floor(by1)));
  const x2 = Math.min(image.width, Math.max(x1 + 1, Math.ceil(bx2)));
  const y2 = Math.min(image.height, Math.max(y1 + 1, Math.ceil(by2)));
  const width = x2 - x1;
  const height = y2 - y1;
  const data = new Uint8Array(width * height * 3);
  const rowBytes = width * 3;
  for (let y = 0; y < height; y++) {
    const src = ((y1 + y) * image.width + x1) * 3;
    data.set(image.data.subarray(src, src + rowBytes), y * rowBytes);
  }
  return { data, width, height };
}
