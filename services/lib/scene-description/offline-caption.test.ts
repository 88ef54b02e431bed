import { describe, expect, it } from '@jest/globals';
import type { Detection } from '../inference/index.js';
import { classCounts, COCO_LABELS, describeChange, OFFLINE_CAPTION_LABEL, offlineCaption } from './index.js';

const box = (label: string, x1: number, x2: number, score = 0.9): Detection => ({
  label,
  classId: COCO_LABELS.indexOf(label),
  score,
  box: [x1, 100, x2, 200],
});

describe('describeChange', () => {
  it('says which classes appeared, left or changed count, in the order first seen', () => {
    const before = [box('person', 0, 10), box('person', 50, 60), box('bus', 0, 300)];
    const after = [box('person', 0, 10), box('person', 50, 60), box('person', 90, 99), box('car', 10, 40)];
    expect(describeChange(before, after)).toBe('people went from two to three, a car appeared, the bus left');
    expect(describeChange([box('person', 0, 1), box('person', 2, 3)], [])).toBe('the two people left');
  });

  it('is undefined when no count changed, and ignores detections under the threshold', () => {
    expect(describeChange([box('cat', 0, 10)], [box('cat', 500, 600)])).toBeUndefined();
    expect(describeChange([], [box('dog', 0, 10, 0.2)])).toBeUndefined();
    expect(classCounts([box('dog', 0, 10, 0.2), box('dog', 0, 10)], 0.1)).toEqual(new Map([['dog', 2]]));
  });
});

describe('offlineCaption', () => {
  it('is labelled, describes the frame and what changed since the last chunk', () => {
    expect(offlineCaption([box('car', 0, 100)], 1000, 500, [])).toBe(
      `${OFFLINE_CAPTION_LABEL} a car; the car on the left, small. Since the last chunk: a car appeared.`,
    );
    expect(offlineCaption([box('car', 0, 100)], 1000, 500)).toBe(
      `${OFFLINE_CAPTION_LABEL} a car; the car on the left, small.`,
    );
  });

  it('says when nothing was detected', () => {
    expect(offlineCaption([], 640, 360, [box('person', 0, 10)])).toBe(
      `${OFFLINE_CAPTION_LABEL} nothing detected. Since the last chunk: the person left.`,
    );
  });
});
