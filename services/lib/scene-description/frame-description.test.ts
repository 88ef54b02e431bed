import { describe, expect, it } from '@jest/globals';
import type { Detection } from '../inference/index.js';
import { describeFrame, describeObject } from './frame-description.js';
import { COCO_LABELS, countedName, labelsNamed, pluralOf } from './object-words.js';

const box = (label: string, x1: number, x2: number, score = 0.9, y1 = 100, y2 = 200): Detection => ({
  label,
  classId: COCO_LABELS.indexOf(label),
  score,
  box: [x1, y1, x2, y2],
});

describe('describeFrame', () => {
  it('counts classes, most frequent first, and says where each is and how large a single one is', () => {
    const described = describeFrame(
      [box('bus', 0, 300, 0.9, 0, 500), box('person', 500, 520), box('person', 900, 940), box('car', 350, 420, 0.3)],
      1000,
      500,
    );
    expect(described).toEqual({
      text: 'two people and a bus; people in the centre and on the right; the bus on the left, large',
      labels: ['person', 'bus'],
      positions: ['person@centre', 'person@right', 'bus@left'],
    });
  });

  it('says nothing for a frame without a confident detection, and honours a lower threshold', () => {
    expect(describeFrame([box('cat', 0, 10, 0.3)], 100, 100)).toBeUndefined();
    expect(describeFrame([box('cat', 0, 10, 0.3)], 100, 100, 0.25)?.text).toBe('a cat; the cat on the left, medium');
  });

  it('describes one object by its place and size', () => {
    expect(describeObject(box('apple', 800, 900, 0.9, 0, 50), 1000, 1000)).toBe('an apple on the right, small');
  });
});

describe('object words', () => {
  it('names plurals and counts', () => {
    expect(['person', 'bus', 'wine glass', 'knife', 'sheep', 'car'].map(pluralOf)).toEqual([
      'people',
      'buses',
      'wine glasses',
      'knives',
      'sheep',
      'cars',
    ]);
    expect(countedName('car', 12)).toBe('12 cars');
  });

  it('finds the classes a query names: plurals, synonyms and two-word labels, in the order named', () => {
    expect(labelsNamed('Two people and a bus on the left', COCO_LABELS)).toEqual(['person', 'bus']);
    expect(labelsNamed('a motorbike next to vehicles', COCO_LABELS)).toEqual(['motorcycle', 'car']);
    expect(labelsNamed('a cup of coffee on the dining table', COCO_LABELS)).toEqual(['cup', 'dining table']);
    expect(labelsNamed('a sunset over the sea', COCO_LABELS)).toEqual([]);
    expect(labelsNamed('buses', ['bus'])).toEqual(['bus']);
  });
});
