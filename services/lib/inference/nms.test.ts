import { describe, expect, it } from '@jest/globals';
import { iou, perClassNms } from './nms.js';
import type { Detection } from './roles.js';

const det = (classId: number, score: number, box: Detection['box']): Detection => ({
  label: `c${classId}`,
  classId,
  score,
  box,
});

describe('perClassNms', () => {
  it('computes IoU of overlapping, disjoint and identical boxes', () => {
    expect(iou([0, 0, 10, 10], [5, 0, 15, 10])).toBeCloseTo(1 / 3, 6);
    expect(iou([0, 0, 10, 10], [20, 20, 30, 30])).toBe(0);
    expect(iou([0, 0, 10, 10], [0, 0, 10, 10])).toBe(1);
  });

  it('suppresses same-class overlaps above 0.5 IoU, keeps other classes and lesser overlaps, best first', () => {
    const kept = perClassNms([
      det(0, 0.6, [1, 0, 11, 10]), // IoU 0.82 with the 0.9 person: dropped
      det(0, 0.9, [0, 0, 10, 10]),
      det(1, 0.7, [0, 0, 10, 10]), // same box, other class: kept
      det(0, 0.5, [5, 0, 15, 10]), // IoU 1/3: kept
      det(0, 0.4, [100, 100, 110, 110]),
    ]);
    expect(kept.map((d) => [d.classId, d.score])).toEqual([
      [0, 0.9],
      [1, 0.7],
      [0, 0.5],
      [0, 0.4],
    ]);
  });
});
