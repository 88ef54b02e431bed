import type { TextEmbedder } from '../../lib/inference/index.js';
import type { MetadataValue, VectorFilter, VectorHit, VectorStore } from '../../lib/vectors/index.js';
import type { RetrievalConfig } from '../config.js';
import type { ParsedQuestion } from '../question/parse-question.js';
import { collapseNearDuplicates, type RetrievedCaption } from './collapse.js';

/** Candidates fetched per answer slot, so that collapsing duplicates still leaves `topK` distinct entries. */
const CANDIDATES_PER_SLOT = 4;
/** Most candidates fetched, whatever `topK`. */
const MAX_CANDIDATES = 200;

/** The store filter of a question: its time window on `timestamp`, its named cameras and runs. */
export function questionFilter(question: ParsedQuestion): VectorFilter {
  const filter: VectorFilter = {};
  const { window, sources } = question;
  if (window) {
    const bounds: { gte?: number; lte?: number } = {};
    if (window.from !== undefined) bounds.gte = window.from;
    if (window.to !== undefined) bounds.lte = window.to;
    filter.range = { timestamp: bounds };
  }
  const inList: Record<string, string[]> = {};
  if (sources.cameras.length > 0) inList.camera = sources.cameras;
  if (sources.runs.length > 0) inList.run_id = sources.runs;
  if (Object.keys(inList).length > 0) filter.in = inList;
  return filter;
}

const text = (value: MetadataValue | undefined) => (typeof value === 'string' ? value : undefined);
const num = (value: MetadataValue | undefined) => (typeof value === 'number' ? value : undefined);

/** A stored caption hit as a RetrievedCaption. */
function fromHit(hit: VectorHit): RetrievedCaption {
  const m = hit.metadata;
  return {
    id: hit.id,
    text: text(m.text) ?? '',
    timestamp: num(m.timestamp) ?? 0,
    camera: text(m.camera),
    runId: text(m.run_id),
    frameId: num(m.frame_id),
    frameKey: text(m.frame_key),
    score: hit.score,
    count: 1,
  };
}

/**
 * Finds the captions that answer a question: the question embedded with the text embedder, the nearest captions
 * within its time window and named sources, those under the score floor dropped (unless a filter chose them: "what
 * happened in the last 10 minutes" is about every caption of those minutes), near-duplicates collapsed, best `topK`.
 */
export class Retriever {
  constructor(
    private readonly embedder: TextEmbedder,
    private readonly captions: VectorStore,
    private readonly config: RetrievalConfig,
  ) {}

  async retrieve(question: ParsedQuestion): Promise<RetrievedCaption[]> {
    const [vector] = await this.embedder.embed([question.text]);
    const filter = questionFilter(question);
    const filtered = filter.range !== undefined || filter.in !== undefined;
    const k = Math.min(this.config.topK * CANDIDATES_PER_SLOT, MAX_CANDIDATES);
    const hits = await this.captions.search(vector, k, filtered ? filter : undefined);
    const candidates = hits.map(fromHit).filter((c) => filtered || c.score >= this.config.minScore);
    const entries = collapseNearDuplicates(candidates, {
      similarity: this.config.collapseSimilarity,
      gapMs: this.config.collapseGapMs,
    });
    return entries.slice(0, this.config.topK);
  }
}
