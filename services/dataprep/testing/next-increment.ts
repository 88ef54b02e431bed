import type { Counter } from 'prom-client';

/** Resolves with the labels of the next increment of `counter` (the counter counts it as usual). */
export function nextIncrement(counter: Counter<'reason'>): Promise<unknown> {
  return new Promise((resolve) => {
    const original = counter.inc.bind(counter);
    counter.inc = ((...args: Parameters<typeof original>) => {
      counter.inc = original;
      original(...args);
      resolve(args[0]);
    }) as typeof counter.inc;
  });
}
