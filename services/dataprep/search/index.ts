/** Public surface of dataprep search: the search domain, its request and answer shapes, and frame descriptions. */
export { FrameNotFoundError, MediaSearch } from './media-search.js';
export type { MediaSearchDeps, SearchAnswer, SearchMode } from './media-search.js';
export type { HitKind, SearchFilters, SearchHit, SearchQuery } from './search-query.js';
export { THUMBNAIL_WIDTH } from './search-hits.js';
export { describeFrame, describeObject, DESCRIPTION_MIN_SCORE } from '../descriptions/frame-description.js';
export type { FrameDescription } from '../descriptions/frame-description.js';
