/** Public surface of dataprep search: the search domain, its request and answer shapes. */
export { FrameNotFoundError, MediaSearch } from './media-search.js';
export type { MediaSearchDeps, SearchAnswer, SearchMode } from './media-search.js';
export type { HitKind, SearchFilters, SearchHit, SearchQuery } from './search-query.js';
export { THUMBNAIL_WIDTH } from './search-hits.js';
