/** One retrieved caption, as retrieval hands it on. */
export interface RetrievedCaption {
  id: string;
  text: string;
  /** Capture time, Unix ms; with `until`, the span of the collapsed captions. */
  timestamp: number;
  until?: number;
  camera?: string;
  runId?: string;
  frameId?: number;
  frameKey?: string;
  score: number;
  /** Captions this entry stands for (1 unless near-identical neighbours were collapsed into it). */
  count: number;
}

/** When two captions are the same observation. */
export interface CollapseRule {
  /** Word-overlap similarity (Jaccard, 0–1) at or above which two texts are near-identical. */
  similarity: number;
  /** Largest time gap between neighbours that still collapse, ms. */
  gapMs: number;
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/** Jaccard similarity of the two texts' word sets (1: the same words). */
export function textSimilarity(a: string, b: string): number {
  const x = words(a);
  const y = words(b);
  if (x.size === 0 && y.size === 0) return 1;
  let shared = 0;
  for (const word of x) if (y.has(word)) shared++;
  return shared / (x.size + y.size - shared);
}

function sourceOf(caption: RetrievedCaption): string {
  return `${caption.camera ?? ''}\u0000${caption.runId ?? ''}`;
}

/**
 * Collapses near-identical consecutive captions: of the same source (camera and run), adjacent in time among the
 * retrieved ones, no further apart than `gapMs` and at least `similarity` alike. A collapsed entry keeps its best
 * scoring caption's id, text and frame, the best score, the time span and the count. Output: by score, best first.
 */
export function collapseNearDuplicates(captions: RetrievedCaption[], rule: CollapseRule): RetrievedCaption[] {
  const bySource = new Map<string, RetrievedCaption[]>();
  for (const caption of captions) {
    const key = sourceOf(caption);
    const group = bySource.get(key);
    if (group) group.push(caption);
    else bySource.set(key, [caption]);
  }
  const entries: RetrievedCaption[] = [];
  for (const group of bySource.values()) {
    group.sort((a, b) => a.timestamp - b.timestamp);
    let current: RetrievedCaption | undefined;
    for (const caption of group) {
      const end: number = current ? (current.until ?? current.timestamp) : 0;
      if (
        current &&
        caption.timestamp - end <= rule.gapMs &&
        textSimilarity(current.text, caption.text) >= rule.similarity
      ) {
        const best = caption.score > current.score ? caption : current;
        current = {
          ...best,
          timestamp: current.timestamp,
          until: caption.timestamp,
          score: best.score,
          count: current.count + caption.count,
        };
        entries[entries.length - 1] = current;
      } else {
        current = { ...caption };
        entries.push(current);
      }
    }
  }
  return entries.sort((a, b) => b.score - a.score || b.timestamp - a.timestamp);
}
