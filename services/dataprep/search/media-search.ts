import type { ImageDescriptorName } from '../../lib/inference/image-descriptor.js';
import type { ImageEmbedder, RgbImage, TextEmbedder } from '../../lib/inference/roles.js';
import type { MetadataValue, VectorFilter, VectorHit, VectorStore } from '../../lib/vectors/index.js';
import { COCO_LABELS } from '../../lib/scene-description/index.js';
import { vectorFilterFor } from './search-filters.js';
import { ImageSpaces, restrictFilter } from './image-spaces.js';
import { bestPerVideo, collapseRuns, momentKey, samplingStep, toHit, type RankedHit } from './search-hits.js';
import type { HitKind, SearchHit, SearchQuery } from './search-query.js';
import { fuseByRank, queryTerms, textScore } from './text-ranking.js';

/**
 * How text queries are answered: `descriptions` (the default offline models: the text embedder and the image
 * embedder live in different spaces, so text meets the frames' descriptions and labels) or `clip` (both embedders
 * share one space, as CLIP's towers do: text also goes straight to the image vectors, fused with the above).
 */
export type SearchMode = 'descriptions' | 'clip';

/** What search reads: the three stores, the two embedders, and how frames are rendered for `like`. */
export interface MediaSearchDeps {
  imageStore: VectorStore;
  descriptionStore: VectorStore;
  summaryStore: VectorStore;
  imageEmbedder: ImageEmbedder;
  /** The descriptor image queries are embedded with (default CURRENT_IMAGE_DESCRIPTOR), as the pipeline writes. */
  imageDescriptor?: ImageDescriptorName;
  textEmbedder: TextEmbedder;
  /** URL path prefix of the service, for thumbnail and video links. */
  basePath: string;
  /** Classes of the detector, for reading queries; COCO's 80 by default. */
  vocabulary?: readonly string[];
}

/** A search's answer: hits best first, and how the query was read. */
export interface SearchAnswer {
  mode: SearchMode;
  hits: SearchHit[];
  /** Classes the text query named (they boost frames holding them); empty for image queries. */
  labels: string[];
  position?: string;
}

/** A stored record met by a query, with the score it ranks by. */
type Candidate = { metadata: Record<string, MetadataValue>; score: number };

/** Candidates fetched per store: enough for top_k after grouping and collapsing, bounded. */
const candidatesFor = (query: SearchQuery) =>
  Math.min(500, query.topK * (query.groupByVideo || query.collapse ? 10 : 3) + 20);

/** Thrown for a `like` whose frame is not stored (404). */
export class FrameNotFoundError extends Error {
  constructor(bucket: string, videoId: string, timestamp: number) {
    super(`No stored frame of video ${videoId} in bucket ${bucket} at ${timestamp} s`);
    this.name = 'FrameNotFoundError';
  }
}

/** The search domain: text, image and frame-alike queries over the stored embeddings, with filters and fusion. */
export class MediaSearch {
  readonly mode: SearchMode;
  private readonly vocabulary: readonly string[];
  /** The descriptor spaces of the image store (more than one while an archive is being re-embedded). */
  readonly imageSpaces: ImageSpaces;

  constructor(private readonly deps: MediaSearchDeps) {
    this.mode = deps.textEmbedder.dimension === deps.imageEmbedder.dimension ? 'clip' : 'descriptions';
    this.vocabulary = deps.vocabulary ?? COCO_LABELS;
    this.imageSpaces = new ImageSpaces(deps.imageStore, deps.imageEmbedder, deps.imageDescriptor);
  }

  /** Runs a text query. */
  async byText(query: SearchQuery, text: string): Promise<SearchAnswer> {
    const terms = queryTerms(text, this.vocabulary);
    const [vector] = await this.deps.textEmbedder.embed([text]);
    const k = candidatesFor(query);
    const scored = new Map<string, Candidate>();
    const keep = (hit: VectorHit, kind: HitKind) => {
      const score = textScore({ kind, similarity: hit.score, metadata: hit.metadata }, terms, this.vocabulary);
      const key = momentKey(hit.metadata);
      if ((scored.get(key)?.score ?? -Infinity) < score) scored.set(key, { metadata: hit.metadata, score });
    };
    const searches: Array<Promise<void>> = [];
    const run = (store: VectorStore, filter: VectorFilter, kind: HitKind) =>
      searches.push(store.search(vector, k, filter).then((hits) => hits.forEach((hit) => keep(hit, kind))));
    for (const kind of query.kinds) {
      const store = kind === 'summary' ? this.deps.summaryStore : this.deps.descriptionStore;
      run(store, vectorFilterFor(query.filters, kind), kind);
      // Moments holding a named class enter the candidates even when described unlike the query (a labels filter
      // of the request's own restricts them already).
      if (terms.labels.length > 0 && kind !== 'summary' && !query.filters.labels) {
        run(store, vectorFilterFor({ ...query.filters, labels: { values: terms.labels, match: 'any' } }, kind), kind);
      }
    }
    await Promise.all(searches);
    let ranked = [...scored.entries()].sort((a, b) => b[1].score - a[1].score);
    if (this.mode === 'clip') ranked = await this.fuseWithImages(query, vector, ranked);
    return {
      mode: this.mode,
      labels: terms.labels,
      ...(terms.position && { position: terms.position }),
      hits: this.finish(
        query,
        ranked.map(([, c]) => c),
      ),
    };
  }

  /** Runs an image query (already decoded); `exclude` leaves one moment out (the frame a `like` started from). */
  async byImage(query: SearchQuery, image: RgbImage, exclude?: string): Promise<SearchAnswer> {
    const k = candidatesFor(query) + (exclude ? 1 : 0);
    // One vector per descriptor space stored, each compared with its own space's records only.
    const spaces = await this.imageSpaces.queries(image);
    const perSpace = await Promise.all(spaces.map((space) => this.searchImages(query, space.vector, k, space.where)));
    const found = perSpace
      .flat()
      .sort((a, b) => b.score - a.score)
      .filter((hit) => momentKey(hit.metadata) !== exclude);
    return { mode: this.mode, labels: [], hits: this.finish(query, found) };
  }

  /**
   * Runs a frame-alike query: `render` draws the stored frame at its moment (GET /media/frame's renderer), which is
   * embedded as an image query; the frame itself is left out of the answer. 404 when no frame is stored there.
   */
  async likeFrame(
    query: SearchQuery,
    frame: { bucketName: string; videoId: string; timestamp: number },
    render: () => Promise<RgbImage>,
  ): Promise<SearchAnswer> {
    const where = {
      equals: { bucket_name: frame.bucketName, video_id: frame.videoId, timestamp: frame.timestamp },
      in: { kind: ['frame', 'image'] },
    };
    if ((await this.deps.imageStore.count(where)) === 0) {
      throw new FrameNotFoundError(frame.bucketName, frame.videoId, frame.timestamp);
    }
    const self = momentKey({
      bucket_name: frame.bucketName,
      video_id: frame.videoId,
      kind: 'frame',
      timestamp: frame.timestamp,
    });
    return this.byImage(query, await render(), self);
  }

  /** CLIP mode: the text vector against the image vectors too, fused by rank with the description ranking. */
  private async fuseWithImages(
    query: SearchQuery,
    vector: Float32Array,
    ranked: Array<[string, Candidate]>,
  ): Promise<Array<[string, Candidate]>> {
    const byKey = new Map(ranked);
    const imageKeys = (await this.searchImages(query, vector, candidatesFor(query))).map((hit) => {
      const key = momentKey(hit.metadata);
      if (!byKey.has(key)) byKey.set(key, { metadata: hit.metadata, score: 0 });
      return key;
    });
    const fused = fuseByRank([ranked.map(([key]) => key), imageKeys]);
    return [...fused.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([key, score]) => [key, { metadata: byKey.get(key)!.metadata, score }]);
  }

  /**
   * The image vectors nearest `vector` for each of the query's image kinds, `k` per kind, best first; `where`
   * restricts them further (to one descriptor space).
   */
  private async searchImages(
    query: SearchQuery,
    vector: Float32Array,
    k: number,
    where?: VectorFilter,
  ): Promise<VectorHit[]> {
    const kinds = query.kinds.filter((kind) => kind !== 'summary');
    const perKind = await Promise.all(
      kinds.map((kind) =>
        this.deps.imageStore.search(vector, k, restrictFilter(vectorFilterFor(query.filters, kind), where)),
      ),
    );
    return perKind.flat().sort((a, b) => b.score - a.score);
  }

  /** min_score, collapse, group_by_video and top_k over candidates best first. */
  private finish(query: SearchQuery, ranked: Candidate[]) {
    const hits: RankedHit[] = ranked
      .filter((c) => query.minScore === undefined || c.score >= query.minScore)
      .map((c) => ({ hit: toHit(c.metadata, c.score, this.deps.basePath), step: samplingStep(c.metadata) }));
    let answer = query.collapse ? collapseRuns(hits) : hits.map((h) => h.hit);
    if (query.groupByVideo) answer = bestPerVideo(answer);
    return answer.slice(0, query.topK);
  }
}
