const RECENCY =
  /\b(latest|last|recent(?:ly)?|newest|most recent|just now|right now|currently|now|so far|lately|still)\b/i;

/**
 * True when the question asks about the latest events ("what happened last", "anything recently", "is the door still
 * open"), so the offline answer lists captions newest first.
 */
export function asksForRecency(question: string): boolean {
  return RECENCY.test(question);
}
