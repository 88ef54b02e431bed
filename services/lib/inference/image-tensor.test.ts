import { describe, expect, it } from '@jest/globals';
import type { ImageInputSpec } from './manifest.js';
import { allocateInput, InputBufferPool, placeImage, prepareImage, toSourcePoint } from './image-tensor.js';
import { writeResampled } from './resample.js';
import { decodeMovenet } from './pose-estimator.js';
import { decodeXyxyScoreClass } from './detection-decode.js';

function spec(overrides: Partial<ImageInputSpec>): ImageInputSpec {
  return {
    name: 'input',
    width: 4,
    height: 4,
    resize: 'stretch',
    layout: 'NHWC',
    dtype: 'float32',
    scale: 1,
    mean: [0, 0, 0],
    std: [1, 1, 1],
    maxBatch: 1,
    ...overrides,
  };
}

describe('placeImage and coordinate mapping', () => {
  it('letterboxes a landscape image into the top-left of the square and maps points back', () => {
    const placement = placeImage(400, 200, spec({ width: 192, height: 192, resize: 'letterbox' }));
    expect(placement).toEqual({ width: 192, height: 96, scaleX: 0.48, scaleY: 0.48 });
    expect(toSourcePoint(96, 48, placement)).toEqual([200, 100]);
  });

  it('center-crops the middle of the image scaled to cover the input, and maps points back', async () => {
    const s = spec({ width: 4, height: 4, resize: 'center-crop', dtype: 'uint8' });
    const placement = placeImage(16, 8, s);
    expect(placement).toEqual({ width: 4, height: 4, scaleX: 0.5, scaleY: 0.5, offsetX: 2, offsetY: 0 });
    expect(toSourcePoint(0, 0, placement)).toEqual([4, 0]);
    expect(toSourcePoint(4, 4, placement)).toEqual([12, 8]);
    // Columns hold their own index ×10: the crop must keep source columns 4..11 only.
    const data = new Uint8Array(16 * 8 * 3).map((_, i) => (Math.floor(i / 3) % 16) * 10);
    const out = allocateInput(s, 1);
    await prepareImage({ data, width: 16, height: 8 }, s, out, 0);
    expect(Array.from(out.subarray(0, 12).filter((_, i) => i % 3 === 0))).toEqual([45, 65, 85, 105]);
  });

  it('stretches with independent x and y scales', () => {
    const placement = placeImage(1024, 256, spec({ width: 512, height: 512 }));
    expect(placement.scaleX).toBe(0.5);
    expect(placement.scaleY).toBe(2);
    expect(toSourcePoint(256, 256, placement)).toEqual([512, 128]);
  });

  it('maps MoveNet keypoints from the padded square to source pixels', () => {
    const input = spec({ width: 192, height: 192, resize: 'letterbox' });
    const placement = placeImage(300, 600, input); // portrait: 96×192 at the left, padding on the right
    const out = new Float32Array(51);
    out.set([0.5, 0.25, 0.9], 0); // nose at centre of the image height, middle of the image width
    out.set([1.0, 0.9, 0.1], 3); // left eye inside the right padding: clamped to the image edge
    const [nose, eye] = decodeMovenet(out, input, placement, 300, 600);
    expect(nose).toMatchObject({ name: 'nose', score: expect.closeTo(0.9, 5) });
    expect(nose.x).toBeCloseTo(150, 6);
    expect(nose.y).toBeCloseTo(300, 6);
    expect(eye).toMatchObject({ name: 'left_eye', x: 300, y: 600 });
  });

  it('maps detector boxes to source pixels, clamps them and drops those wholly in the padding', () => {
    const placement = placeImage(1000, 500, spec({ width: 512, height: 512, resize: 'letterbox' }));
    const rows = [
      [51.2, 25.6, 102.4, 51.2, 0.9, 5],
      [-10, -10, 600, 300, 0.8, 0],
      [0, 300, 100, 400, 0.95, 2], // below the image (letterbox padding)
      [0, 0, 10, 10, 0.1, 1], // under minScore
    ].flat();
    const detections = decodeXyxyScoreClass(rows, {
      placement,
      sourceWidth: 1000,
      sourceHeight: 500,
      labels: ['person', 'bicycle', 'car', 'motorcycle', 'airplane', 'bus'],
      minScore: 0.3,
    });
    expect(detections).toHaveLength(2);
    expect(detections[0].label).toBe('bus');
    detections[0].box.forEach((v, i) => expect(v).toBeCloseTo([100, 50, 200, 100][i], 6));
    expect(detections[1]).toMatchObject({ label: 'person', box: [0, 0, 1000, 500] });
  });
});

/** A sampling window covering the whole image at `fx = fy = 1` unless overridden. */
function whole(width: number, height: number) {
  return { width, height, fx: 1, fy: 1, offsetX: 0, offsetY: 0 };
}

describe('writeResampled and prepareImage', () => {
  const image = { data: Uint8Array.from([10, 20, 30, 40, 50, 60]), width: 2, height: 1 };

  it('normalises NHWC pixels per channel and pads with black', () => {
    const s = spec({ width: 2, height: 2, scale: 1 / 255, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] });
    const out = allocateInput(s, 2);
    writeResampled(image, whole(2, 1), s, out, 1);
    const second = Array.from(out.subarray(12));
    expect(second[0]).toBeCloseTo((10 / 255 - 0.5) / 0.5, 6);
    expect(second[5]).toBeCloseTo((60 / 255 - 0.5) / 0.5, 6);
    expect(second.slice(6)).toEqual([-1, -1, -1, -1, -1, -1]);
    expect(Array.from(out.subarray(0, 12)).every((v) => v === 0)).toBe(true);
  });

  it('writes NCHW planes and casts to int32', () => {
    const s = spec({ width: 2, height: 1, layout: 'NCHW', dtype: 'int32', scale: 0.5 });
    const out = allocateInput(s, 1);
    writeResampled(image, whole(2, 1), s, out, 0);
    expect(out).toBeInstanceOf(Int32Array);
    expect(Array.from(out)).toEqual([5, 20, 10, 25, 15, 30]);
  });

  it('interpolates bilinearly with half-pixel centres when upscaling', () => {
    const s = spec({ width: 4, height: 1 });
    const out = allocateInput(s, 1);
    writeResampled(
      { data: Uint8Array.from([0, 0, 0, 100, 100, 100]), width: 2, height: 1 },
      { ...whole(4, 1), fx: 0.5 },
      s,
      out,
      0,
    );
    expect(Array.from(out.filter((_, i) => i % 3 === 0))).toEqual([0, 25, 75, 100]);
  });

  it('averages on large reductions instead of sampling a few source pixels', async () => {
    // One white column in four: the true average is 64, a plain bilinear tap at this 8× reduction would read 127.5.
    const size = 64;
    const data = new Uint8Array(size * size * 3);
    for (let i = 0; i < size * size; i++) data.fill(i % 4 === 0 ? 255 : 0, i * 3, i * 3 + 3);
    const s = spec({ width: 8, height: 8, dtype: 'uint8' });
    const out = allocateInput(s, 1);
    await prepareImage({ data, width: size, height: size }, s, out, 0);
    for (const v of out) expect(v >= 40 && v <= 105).toBe(true);
  });

  it('rejects an image whose data does not match its size', async () => {
    const s = spec({});
    const out = allocateInput(s, 1);
    await expect(prepareImage({ data: new Uint8Array(5), width: 2, height: 1 }, s, out, 0)).rejects.toThrow(RangeError);
    await expect(prepareImage({ data: new Uint8Array(0), width: 0, height: 0 }, s, out, 0)).rejects.toThrow(RangeError);
  });

  it('letterboxes a real-sized image through prepareImage', async () => {
    const s = spec({ width: 8, height: 8, resize: 'letterbox', dtype: 'uint8' });
    const source = { data: new Uint8Array(16 * 8 * 3).fill(200), width: 16, height: 8 };
    const out = allocateInput(s, 1);
    const placement = await prepareImage(source, s, out, 0);
    expect(placement).toEqual({ width: 8, height: 4, scaleX: 0.5, scaleY: 0.5 });
    expect(out[0]).toBe(200);
    expect(out[(3 * 8 + 7) * 3]).toBe(200); // last row of the image
    expect(out[4 * 8 * 3]).toBe(0); // first padding row
  });
});

describe('InputBufferPool', () => {
  it('reuses released buffers and never hands one out twice at once', () => {
    const pool = new InputBufferPool(spec({ width: 2, height: 2 }));
    const a = pool.acquire(3);
    const b = pool.acquire(3);
    expect(a).not.toBe(b);
    expect(a).toHaveLength(36);
    pool.release(a);
    expect(pool.acquire(3)).toBe(a);
    expect(pool.acquire(1)).toHaveLength(12);
    // Only the two most recently released buffers are kept.
    const c = pool.acquire(2);
    pool.release(a);
    pool.release(b);
    pool.release(c);
    expect(pool.acquire(3)).toBe(b);
    expect(pool.acquire(3)).not.toBe(a);
  });
});
