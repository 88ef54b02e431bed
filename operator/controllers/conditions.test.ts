import { describe, expect, it } from '@jest/globals';
import { setConditions } from './conditions.js';

describe('setConditions', () => {
  const ready = { type: 'Ready', status: 'False' as const, reason: 'Pending', message: 'waiting' };

  it('stamps a new condition with now and the generation', () => {
    expect(setConditions(undefined, [ready], 't1', 3)).toEqual([
      { ...ready, lastTransitionTime: 't1', observedGeneration: 3 },
    ]);
  });

  it('keeps lastTransitionTime while the status stays, even when reason and message change', () => {
    const first = setConditions(undefined, [ready], 't1', 1);
    const second = setConditions(first, [{ ...ready, reason: 'Running', message: '1/2' }], 't2', 1);
    expect(second[0]).toMatchObject({ reason: 'Running', message: '1/2', lastTransitionTime: 't1' });
  });

  it('moves lastTransitionTime when the status changes, and keeps conditions it was not given', () => {
    const first = setConditions(undefined, [ready, { ...ready, type: 'Custom' }], 't1', 1);
    const second = setConditions(first, [{ ...ready, status: 'True', reason: 'Completed' }], 't2', 2);
    expect(second).toEqual([
      { ...ready, status: 'True', reason: 'Completed', lastTransitionTime: 't2', observedGeneration: 2 },
      { ...ready, type: 'Custom', lastTransitionTime: 't1', observedGeneration: 1 },
    ]);
  });
});
