import { describe, expect, it } from '@jest/globals';
import { decodeYolov8 } from './detection-decode.js';

describe('decodeYolov8', () => {
  it('takes each anchor’s best class, filters by score and maps cx,cy,w,h to source xyxy', () => {
    // [1, 4+2, 3]: channel-major, one column per anchor.
    const anchors = 3;
    const data = new Float32Array(6 * anchors);
    const set = (channel: number, anchor: number, v: number) => (data[channel * anchors + anchor] = v);
    [320, 320, 64, 32, 0.1, 0.8].forEach((v, c) => set(c, 0, v)); // class 1 at 0.8
    [100, 100, 20, 20, 0.2, 0.1].forEach((v, c) => set(c, 1, v)); // best 0.2 < minScore
    [630, 10, 40, 40, 0.9, 0.0].forEach((v, c) => set(c, 2, v)); // runs over the right edge
    const placement = { width: 640, height: 640, scaleX: 0.5, scaleY: 0.5 };
    const detections = decodeYolov8(data, [1, 6, anchors], {
      placement,
      sourceWidth: 1280,
      sourceHeight: 1280,
      labels: ['person', 'dog'],
      minScore: 0.25,
    });
    expect(detections).toEqual([
      { label: 'dog', classId: 1, score: expect.closeTo(0.8, 6), box: [576, 608, 704, 672] },
      { label: 'person', classId: 0, score: expect.closeTo(0.9, 6), box: [1220, 0, 1280, 60] },
    ]);
  });

  it('rejects an output that is not [1, 4+C, N]', () => {
    expect(() =>
      decodeYolov8(new Float32Array(8), [1, 8], {
        placement: { width: 1, height: 1, scaleX: 1, scaleY: 1 },
        sourceWidth: 1,
        sourceHeight: 1,
        labels: [],
        minScore: 0,
      }),
    ).toThrow(/yolov8 output/);
  });
});
