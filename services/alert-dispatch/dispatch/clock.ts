/** Source of the current time in milliseconds; injected so tests never sleep. */
export type Clock = () => number;

/** The wall clock. */
export const systemClock: Clock = () => Date.now();

/** ISO-8601 with an explicit `+00:00` offset (the contract asks for an offset, not `Z`). */
export function isoWithOffset(ms: number): string {
  // toISOString() always ends in `Z`; slicing is cheaper than a regex on the dispatch path.
  return `${new Date(ms).toISOString().slice(0, -1)}+00:00`;
}
