import { describe, expect, it } from '@jest/globals';
import { COCO_LABELS } from '../../lib/scene-description/index.js';
import { collapseRuns, type RankedHit } from './search-hits.js';
import type { SearchHit } from './search-query.js';
import { fuseByRank, queryTerms, textScore } from './text-ranking.js';

const frame = (labels: string[], positions: string[] = []) => ({
  kind: 'frame' as const,
  similarity: 0.6,
  metadata: { labels, positions },
});

describe('text ranking', () => {
  it('reads the classes and the side a query names', () => {
    expect(queryTerms('A bus on the LEFT', COCO_LABELS)).toEqual({ labels: ['bus'], position: 'left' });
    expect(queryTerms('people in the middle', COCO_LABELS)).toEqual({
      labels: ['person'],
      several: ['person'],
      position: 'centre',
    });
    expect(queryTerms('sunset', COCO_LABELS)).toEqual({ labels: [] });
  });

  it('scores similarity alone without a named class, and boosts frames holding it, more so on the named side', () => {
    const terms = queryTerms('a bus on the left', COCO_LABELS);
    expect(textScore(frame(['bus']), { labels: [] }, COCO_LABELS)).toBe(0.6);
    const none = textScore(frame(['car']), terms, COCO_LABELS);
    const elsewhere = textScore(frame(['bus'], ['bus@right']), terms, COCO_LABELS);
    const onSide = textScore(frame(['bus'], ['bus@left']), terms, COCO_LABELS);
    expect(none).toBeCloseTo(0.3);
    expect(elsewhere).toBeCloseTo(0.3 + 0.5 * 0.7);
    expect(onSide).toBeCloseTo(0.8);
  });

  it('prefers frames holding several of a class asked for in the plural', () => {
    const terms = queryTerms('people', COCO_LABELS);
    const one = { ...frame(['person']), metadata: { labels: ['person'], description: 'a person; the person …' } };
    const crowd = { ...frame(['person']), metadata: { labels: ['person'], description: 'three people; people …' } };
    expect(textScore(crowd, terms, COCO_LABELS)).toBeCloseTo(0.8);
    expect(textScore(one, terms, COCO_LABELS)).toBeCloseTo(0.6);
  });

  it('gives an object its class and a summary the classes its words name', () => {
    const terms = queryTerms('a dog', COCO_LABELS);
    const object = { kind: 'object' as const, similarity: 0.4, metadata: { label: 'dog' } };
    const summary = { kind: 'summary' as const, similarity: 0.4, metadata: { summary: 'Two dogs play.' } };
    expect(textScore(object, terms, COCO_LABELS)).toBeCloseTo(0.7);
    expect(textScore(summary, terms, COCO_LABELS)).toBeCloseTo(0.7);
  });

  it('fuses rankings by reciprocal rank, first everywhere scoring 1', () => {
    const fused = fuseByRank([
      ['a', 'b', 'c'],
      ['a', 'c'],
    ]);
    expect(fused.get('a')).toBeCloseTo(1);
    expect(fused.get('c')!).toBeGreaterThan(fused.get('b')!);
  });
});

describe('collapseRuns', () => {
  const hit = (video: string, t: number, score: number): RankedHit => ({
    hit: { video_id: video, bucket_name: 'b', kind: 'frame', timestamp: t, score } as SearchHit,
    step: 1,
  });

  it('merges consecutive near-identical frames of one video into the best, with the span', () => {
    const out = collapseRuns([
      hit('v', 3, 0.9),
      hit('v', 2, 0.89),
      hit('v', 4, 0.895),
      hit('w', 5, 0.8),
      hit('v', 6, 0.88),
    ]);
    expect(out.map((h) => [h.video_id, h.timestamp, h.from_seconds, h.to_seconds])).toEqual([
      ['v', 3, 2, 4],
      ['w', 5, undefined, undefined],
      ['v', 6, undefined, undefined],
    ]);
  });

  it('keeps frames apart when their scores differ', () => {
    expect(collapseRuns([hit('v', 1, 0.9), hit('v', 2, 0.5)])).toHaveLength(2);
  });
});
