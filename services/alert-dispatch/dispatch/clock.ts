/** Source of the current time in milliseconds; injected so tests never sleep. */
export type Clock = () => number;

/** The wall clock. */
export const systemClock: Clock = () => Date.now();

let lastMs = NaN;
let lastIso = '';

/** ISO-8601 with an explicit `+00:00` offset (the contract asks for an offset, not `Z`). */
export function isoWithOffset(ms: number): string {
  // Under load many alerts share a millisecond (and each dispatch formats it twice): reuse the last string.
  if (ms === lastMs) return lastIso;
  // toISOString() always ends in `Z` (and throws for an invalid time); slicing is cheaper than a regex.
  const iso = `${new Date(ms).toISOString().slice(0, -1)}+00:00`;
  lastMs = ms;
  lastIso = iso;
  return iso;
}
