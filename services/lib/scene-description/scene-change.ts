import type { Detection } from '../inference/index.js';
import { DESCRIPTION_MIN_SCORE } from './frame-description.js';
import { countedName, pluralOf } from './object-words.js';

/** How many objects of each class a frame holds (detections at least `minScore` confident). */
export function classCounts(detections: Detection[], minScore = DESCRIPTION_MIN_SCORE): Map<string, number> {
  const counts = new Map<string, number>();
  for (const detection of detections) {
    if (detection.score >= minScore) counts.set(detection.label, (counts.get(detection.label) ?? 0) + 1);
  }
  return counts;
}

const NUMBER_WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const number = (n: number) => NUMBER_WORDS[n] ?? String(n);

/**
 * What changed between two frames' detections, in words, class by class in the order they are first seen: "a car
 * appeared", "the two people left", "people went from two to three"; undefined when no count changed.
 */
export function describeChange(
  previous: Detection[],
  current: Detection[],
  minScore = DESCRIPTION_MIN_SCORE,
): string | undefined {
  const before = classCounts(previous, minScore);
  const after = classCounts(current, minScore);
  const changes: string[] = [];
  for (const label of new Set([...after.keys(), ...before.keys()])) {
    const was = before.get(label) ?? 0;
    const now = after.get(label) ?? 0;
    if (was === now) continue;
    if (was === 0) changes.push(`${countedName(label, now)} appeared`);
    else if (now === 0) changes.push(was === 1 ? `the ${label} left` : `the ${number(was)} ${pluralOf(label)} left`);
    else changes.push(`${pluralOf(label)} went from ${number(was)} to ${number(now)}`);
  }
  return changes.length > 0 ? changes.join(', ') : undefined;
}
