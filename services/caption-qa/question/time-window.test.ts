import { describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import { parseTimeWindow, type TimeContext } from './time-window.js';

const MIN = 60_000;
const zone = 'Europe/Paris';
/** Tuesday 2026-03-10 15:30 in Paris (UTC+1). */
const now = DateTime.fromISO('2026-03-10T15:30:00', { zone }).toMillis();
const ctx: TimeContext = { now, zone, atToleranceMs: 5 * MIN };
const local = (iso: string, z = zone) => DateTime.fromISO(iso, { zone: z }).toMillis();
const parse = (q: string, c: TimeContext = ctx) => parseTimeWindow(q, c);

describe('parseTimeWindow', () => {
  it('reads "in the last N minutes/hours" and its variants as [now - span, now]', () => {
    expect(parse('What happened in the last 10 minutes?')).toEqual({
      from: now - 10 * MIN,
      to: now,
      phrase: 'in the last 10 minutes',
    });
    expect(parse('anyone at the door during the past hour')).toMatchObject({ from: now - 60 * MIN, to: now });
    expect(parse('cars over the last two hours')).toMatchObject({ from: now - 120 * MIN });
    expect(parse('last 30 secs')).toMatchObject({ from: now - 30_000 });
    expect(parse('in the last few minutes')).toMatchObject({ from: now - 3 * MIN });
    expect(parse('past 2 days')).toMatchObject({ from: local('2026-03-08T15:30:00') });
  });

  it('reads "N minutes ago" as a window around that moment', () => {
    expect(parse('what was there 20 minutes ago')).toEqual({
      from: now - 25 * MIN,
      to: now - 15 * MIN,
      phrase: '20 minutes ago',
    });
  });

  it('reads "since HH:MM" in the configured zone, up to now', () => {
    expect(parse('since 14:00, who came in?')).toEqual({
      from: local('2026-03-10T14:00'),
      to: now,
      phrase: 'since 14:00',
    });
    expect(parse('since 2pm')).toMatchObject({ from: local('2026-03-10T14:00') });
    expect(parse('since 2:15 p.m.')).toMatchObject({ from: local('2026-03-10T14:15') });
  });

  it("takes a clock time later than now as yesterday's", () => {
    expect(parse('since 23:00')).toMatchObject({ from: local('2026-03-09T23:00'), to: now });
  });

  it('reads "at HH:MM" as a window of ± the tolerance around it', () => {
    expect(parse('What did camera 2 see at 14:05?')).toEqual({
      from: local('2026-03-10T14:00'),
      to: local('2026-03-10T14:10'),
      phrase: 'at 14:05',
    });
    expect(parse('around 9am yesterday')).toMatchObject({
      from: local('2026-03-09T08:55'),
      to: local('2026-03-09T09:05'),
    });
  });

  it('does not take a bare number for a clock time', () => {
    expect(parse('is there a person at 5 doors')).toBeUndefined();
    expect(parse('at 25:00')).toBeUndefined();
  });

  it('reads "between X and Y"', () => {
    expect(parse('between 9am and 11am')).toMatchObject({
      from: local('2026-03-10T09:00'),
      to: local('2026-03-10T11:00'),
    });
    expect(parse('between 13:30 and 14:00 yesterday')).toMatchObject({
      from: local('2026-03-09T13:30'),
      to: local('2026-03-09T14:00'),
    });
  });

  it('reads day words in the configured zone', () => {
    expect(parse('what happened yesterday')).toEqual({
      from: local('2026-03-09T00:00'),
      to: local('2026-03-10T00:00') - 1,
      phrase: 'yesterday',
    });
    expect(parse('anything today?')).toMatchObject({ from: local('2026-03-10T00:00'), to: now });
    expect(parse('deliveries this morning')).toMatchObject({
      from: local('2026-03-10T05:00'),
      to: local('2026-03-10T12:00') - 1,
    });
    expect(parse('yesterday afternoon')).toMatchObject({
      from: local('2026-03-09T12:00'),
      to: local('2026-03-09T18:00') - 1,
    });
    expect(parse('last night')).toMatchObject({ from: local('2026-03-09T18:00'), to: local('2026-03-10T00:00') - 1 });
    expect(parse('this evening')).toMatchObject({ from: local('2026-03-10T18:00'), to: local('2026-03-11T00:00') - 1 });
  });

  it('reads "since" a day word as from the start of that span up to now', () => {
    expect(parse('anything since yesterday?')).toEqual({
      from: local('2026-03-09T00:00'),
      to: now,
      phrase: 'since yesterday',
    });
    expect(parse('since this morning')).toMatchObject({ from: local('2026-03-10T05:00'), to: now });
  });

  it('counts days in the zone, not in UTC', () => {
    // 00:30 in Paris is still the previous day in UTC.
    const early = DateTime.fromISO('2026-03-10T00:30', { zone }).toMillis();
    expect(parse('today', { ...ctx, now: early })).toMatchObject({ from: local('2026-03-10T00:00') });
    expect(parse('today', { ...ctx, now: early, zone: 'UTC' })).toMatchObject({
      from: local('2026-03-09T00:00', 'UTC'),
    });
  });

  it('finds nothing in a question without time words', () => {
    expect(parse('is there a red car near the gate?')).toBeUndefined();
  });
});
