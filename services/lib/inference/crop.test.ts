import { describe, expect, it } from '@jest/globals';
import { cropDetection } from './crop.js';

describe('cropDetection', () => {
  // 4×3 image whose red channel is the pixel index.
  const image = { width: 4, height: 3, data: new Uint8Array(36) };
  for (let i = 0; i < 12; i++) image.data[i * 3] = i;

  it('copies the box rows, rounding outward', () => {
    const crop = cropDetection(image, { box: [0.5, 1.2, 2.5, 2.9] });
    expect([crop.width, crop.height]).toEqual([3, 2]);
    expect(Array.from(crop.data.filter((_, i) => i % 3 === 0))).toEqual([4, 5, 6, 8, 9, 10]);
  });

  it('clamps to the image bounds and never returns an empty image', () => {
    expect(cropDetection(image, { box: [-5, -5, 50, 50] })).toMatchObject({ width: 4, height: 3 });
    const sliver = cropDetection(image, { box: [10, 10, 12, 12] });
    expect([sliver.width, sliver.height]).toEqual([1, 1]);
    expect(sliver.data[0]).toBe(11);
  });
});
