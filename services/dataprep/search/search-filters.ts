import type { VectorFilter } from '../../lib/vectors/index.js';
import type { HitKind, SearchFilters } from './search-query.js';

/** Stored `kind` values behind each hit kind. */
const STORED_KINDS: Readonly<Record<HitKind, string[]>> = {
  frame: ['frame', 'image'],
  object: ['crop'],
  summary: ['summary'],
};

/**
 * The vector-store filter of `filters` for records of hit kind `kind`. Frames match `labels` on their list of
 * detected classes; an object matches when its own class is one of them (an object has one class, so `all` and
 * `any` read the same there); summaries carry no labels, so a labels filter leaves them out.
 */
export function vectorFilterFor(filters: SearchFilters, kind: HitKind): VectorFilter {
  const filter: Required<Pick<VectorFilter, 'equals' | 'in' | 'containsAll' | 'range'>> = {
    equals: {},
    in: { kind: STORED_KINDS[kind] },
    containsAll: {},
    range: {},
  };
  if (filters.bucketName !== undefined) filter.equals.bucket_name = filters.bucketName;
  if (filters.videoIds) filter.in.video_id = filters.videoIds;
  if (filters.tags) {
    if (filters.tags.match === 'all') filter.containsAll.tags = filters.tags.values;
    else filter.in.tags = filters.tags.values;
  }
  if (filters.labels) {
    if (kind === 'object') filter.in.label = filters.labels.values;
    else if (filters.labels.match === 'all') filter.containsAll.labels = filters.labels.values;
    else filter.in.labels = filters.labels.values;
  }
  if (filters.ingestedFrom !== undefined || filters.ingestedTo !== undefined) {
    filter.range.upload_ts = bounds(filters.ingestedFrom, filters.ingestedTo);
  }
  if (filters.fromSeconds !== undefined || filters.toSeconds !== undefined) {
    filter.range.timestamp = bounds(filters.fromSeconds, filters.toSeconds);
  }
  for (const [key, value] of Object.entries(filters.metadata ?? {})) {
    if (Array.isArray(value)) filter.in[key] = value;
    else if (value !== null) filter.equals[key] = value;
  }
  return filter;
}

function bounds(gte: number | undefined, lte: number | undefined): { gte?: number; lte?: number } {
  return { ...(gte !== undefined && { gte }), ...(lte !== undefined && { lte }) };
}
