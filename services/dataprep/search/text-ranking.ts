import type { MetadataValue } from '../../lib/vectors/index.js';
import { labelsNamed, pluralOf, type HorizontalPosition } from '../../lib/scene-description/index.js';
import { metadataStrings } from './search-hits.js';
import type { HitKind } from './search-query.js';

/** What a text query names besides its words: detector classes and a side of the frame. */
export interface QueryTerms {
  labels: string[];
  /** Named classes the query asks for several of ("people", "two cars"). */
  several?: string[];
  position?: HorizontalPosition;
}

const POSITION_WORDS: ReadonlyArray<[RegExp, HorizontalPosition]> = [
  [/\b(left)\b/, 'left'],
  [/\b(right)\b/, 'right'],
  [/\b(centre|center|middle)\b/, 'centre'],
];

/** The classes (in `vocabulary`) and the side a query names: "a bus on the left" → bus, left. */
export function queryTerms(query: string, vocabulary: readonly string[]): QueryTerms {
  const lower = ` ${(query.toLowerCase().match(/[a-z]+/g) ?? []).join(' ')} `;
  const position = POSITION_WORDS.find(([pattern]) => pattern.test(lower))?.[1];
  const labels = labelsNamed(query, vocabulary);
  const several = labels.filter((label) => pluralOf(label) !== label && lower.includes(` ${pluralOf(label)} `));
  return { labels, ...(several.length > 0 && { several }), ...(position && { position }) };
}

/** A candidate of a text search: a stored description or summary and its similarity to the query. */
export interface TextCandidate {
  kind: HitKind;
  similarity: number;
  metadata: Record<string, MetadataValue>;
}

/**
 * The score of a text candidate, 0–1. Without a named class it is the description's (or summary's) similarity to
 * the query. With one, half of it is that similarity and half the share of named classes the frame holds (an object:
 * its class; a summary: the classes its text names), a class asked for in the plural counting 0.6 in a frame that
 * holds only one; a named side weighs 30% of that half, earned by the named classes seen on that side. So a frame
 * holding what the query names outranks one merely described alike.
 */
export function textScore(candidate: TextCandidate, terms: QueryTerms, vocabulary: readonly string[]): number {
  const { similarity, metadata, kind } = candidate;
  if (terms.labels.length === 0) return similarity;
  const present =
    kind === 'object'
      ? [String(metadata.label)]
      : kind === 'summary'
        ? labelsNamed(String(metadata.summary ?? ''), vocabulary)
        : metadataStrings(metadata.labels);
  const matched = terms.labels.filter((label) => present.includes(label));
  // A frame's description uses the plural exactly when it holds several of a class.
  const description = String(metadata.description ?? '');
  const holdsSeveral = (label: string) =>
    kind !== 'frame' || !terms.several?.includes(label) || description.includes(pluralOf(label));
  const weight = matched.reduce((sum, label) => sum + (holdsSeveral(label) ? 1 : 0.6), 0);
  let labelScore = weight / terms.labels.length;
  if (terms.position && matched.length > 0) {
    const side = terms.position;
    const onSide =
      kind === 'object'
        ? matched.filter(() => description.includes(side))
        : matched.filter((label) => metadataStrings(metadata.positions).includes(`${label}@${side}`));
    labelScore *= 0.7 + (0.3 * onSide.length) / terms.labels.length;
  }
  return 0.5 * similarity + 0.5 * labelScore;
}

/** Reciprocal-rank fusion constant: ranks far down a list still count, a little. */
const RRF_K = 60;

/**
 * Fuses ranked lists of keys by reciprocal rank (each list counts 1/(RRF_K + rank)), normalised so that a key first
 * in every list scores 1. Used where the lists' scores are not comparable (description similarity vs CLIP's).
 */
export function fuseByRank(lists: string[][]): Map<string, number> {
  const fused = new Map<string, number>();
  const best = lists.length / (RRF_K + 1);
  for (const list of lists) {
    list.forEach((key, rank) => fused.set(key, (fused.get(key) ?? 0) + 1 / (RRF_K + rank + 1) / best));
  }
  return fused;
}
