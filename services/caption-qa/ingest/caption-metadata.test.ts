import { describe, expect, it } from '@jest/globals';
import { captionFields, epochMillis, MAX_EXTRA_KEYS } from './caption-metadata.js';

describe('epochMillis', () => {
  it('tells seconds, milliseconds, microseconds and nanoseconds apart by magnitude', () => {
    const ms = Date.UTC(2026, 2, 10, 14, 5);
    expect(epochMillis(ms / 1000)).toBe(ms);
    expect(epochMillis(ms)).toBe(ms);
    expect(epochMillis(ms * 1000)).toBe(ms);
    expect(epochMillis(ms * 1e6)).toBe(ms);
    expect(epochMillis(1.5)).toBe(1500);
  });
});

describe('captionFields', () => {
  it('maps the known keys, keeps scalar extras under x_ and names the rest', () => {
    const extras = Object.fromEntries(Array.from({ length: MAX_EXTRA_KEYS + 1 }, (_, i) => [`k${i}`, i]));
    const fields = captionFields(
      {
        result: 'A bus stops',
        frame_id: 3,
        resolution: { width: 640, height: 360 },
        img_format: 'jpeg',
        camera: 'street',
        nested: { a: 1 },
        long: 'x'.repeat(2000),
        ...extras,
      },
      1000,
    );
    expect(fields).toMatchObject({ text: 'A bus stops', timestamp: 1000, camera: 'street', frameId: 3 });
    expect(fields.metadata).toMatchObject({
      kind: 'caption',
      text: 'A bus stops',
      timestamp: 1000,
      received_at: 1000,
      frame_id: 3,
      width: 640,
      height: 360,
      img_format: 'jpeg',
      camera: 'street',
      x_k0: 0,
    });
    expect(fields.ignored).toEqual(['nested', 'long', `k${MAX_EXTRA_KEYS}`]);
  });
});
