import { describe, expect, it } from '@jest/globals';
import { parseQuestion } from './parse-question.js';
import { asksForRecency } from './recency.js';
import { findSourceMentions } from './source-mentions.js';

const known = { cameras: ['front-door', 'door', 'Parking_Lot'], runs: ['run-42'] };

describe('findSourceMentions', () => {
  it('matches known names as whole words, case and punctuation ignored', () => {
    expect(findSourceMentions('What did the Front Door camera see?', known)).toEqual({
      cameras: ['front-door'],
      runs: [],
    });
    expect(findSourceMentions('cars in the parking lot', known).cameras).toEqual(['Parking_Lot']);
    expect(findSourceMentions('in run 42 and at the door', known)).toEqual({ cameras: ['door'], runs: ['run-42'] });
  });

  it('does not count a name inside a longer one, nor inside a word', () => {
    expect(findSourceMentions('front door', known).cameras).toEqual(['front-door']);
    expect(findSourceMentions('doors and indoor', known).cameras).toEqual([]);
  });
});

describe('asksForRecency', () => {
  it('tells recency questions from others', () => {
    expect(asksForRecency('what happened last?')).toBe(true);
    expect(asksForRecency('Is the gate still open')).toBe(true);
    expect(asksForRecency('was there a dog')).toBe(false);
  });
});

describe('parseQuestion', () => {
  const ctx = { now: Date.UTC(2026, 0, 5, 12), zone: 'UTC', atToleranceMs: 60_000 };

  it('combines the time window, sources and recency', () => {
    const parsed = parseQuestion('  who came to the front door in the last 5 minutes? ', ctx, known);
    expect(parsed).toEqual({
      text: 'who came to the front door in the last 5 minutes?',
      window: { from: ctx.now - 300_000, to: ctx.now, phrase: 'in the last 5 minutes' },
      sources: { cameras: ['front-door'], runs: [] },
      recency: true,
    });
  });

  it('counts a window ending now as a recency question', () => {
    expect(parseQuestion('anything since 11:00', ctx, known).recency).toBe(true);
    expect(parseQuestion('what was seen at 09:00', ctx, known).recency).toBe(false);
  });
});
