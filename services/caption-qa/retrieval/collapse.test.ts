import { describe, expect, it } from '@jest/globals';
import { collapseNearDuplicates, textSimilarity, type RetrievedCaption } from './collapse.js';

const rule = { similarity: 0.75, gapMs: 60_000 };
let next = 0;
const caption = (text: string, timestamp: number, score: number, camera = 'a'): RetrievedCaption => ({
  id: `c${next++}`,
  text,
  timestamp,
  camera,
  score,
  count: 1,
});

describe('textSimilarity', () => {
  it('is word overlap, case and punctuation ignored', () => {
    expect(textSimilarity('A dog runs.', 'a DOG runs')).toBe(1);
    expect(textSimilarity('a man opens the door', 'a man closes the door')).toBeCloseTo(4 / 6);
    expect(textSimilarity('cat', 'truck')).toBe(0);
  });
});

describe('collapseNearDuplicates', () => {
  it('merges near-identical neighbours of one source into one entry with its span, count and best score', () => {
    const best = caption('A person waits at the gate', 20_000, 0.9);
    const out = collapseNearDuplicates(
      [caption('A person waits at the gate', 0, 0.8), best, caption('A person waits by the gate', 50_000, 0.7)],
      { ...rule, similarity: 0.6 },
    );
    expect(out).toEqual([{ ...best, timestamp: 0, until: 50_000, count: 3 }]);
  });

  it('keeps captions apart across sources, past the gap, or when the text differs', () => {
    const out = collapseNearDuplicates(
      [
        caption('A person waits at the gate', 0, 0.9),
        caption('A person waits at the gate', 10_000, 0.8, 'b'),
        caption('A person waits at the gate', 200_000, 0.7),
        caption('A truck backs into the dock', 210_000, 0.6),
      ],
      rule,
    );
    expect(out.map((c) => [c.camera, c.timestamp, c.count])).toEqual([
      ['a', 0, 1],
      ['b', 10_000, 1],
      ['a', 200_000, 1],
      ['a', 210_000, 1],
    ]);
  });

  it('measures the gap from the end of the span so far, so a long repeated scene stays one entry', () => {
    const repeated = [0, 50_000, 100_000, 150_000].map((t) => caption('Nobody is in the room', t, 0.5));
    expect(collapseNearDuplicates(repeated, rule)).toMatchObject([{ timestamp: 0, until: 150_000, count: 4 }]);
  });
});
