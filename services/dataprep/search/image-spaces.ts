import {
  CURRENT_IMAGE_DESCRIPTOR,
  IMAGE_DESCRIPTORS,
  imageDescriptor,
  type ImageDescriptorName,
} from '../../lib/inference/image-descriptor.js';
import type { ImageEmbedder, RgbImage } from '../../lib/inference/roles.js';
import type { VectorFilter, VectorStore } from '../../lib/vectors/index.js';

/** The metadata key holding the descriptor a stored image vector was made with (absent: `global-v1`). */
const DESCRIPTOR_KEY = 'image_descriptor';

/** How long the answer "which descriptor spaces does the store hold" is reused before the store is asked again. */
export const SPACES_TTL_MS = 30_000;

/**
 * The records of descriptor `name`. Vectors written before descriptors were recorded carry no name: they are the
 * first descriptor's, so that one matches every record not named as a later one (one later descriptor exists).
 */
export function descriptorFilter(name: ImageDescriptorName): VectorFilter {
  const [first, ...later] = IMAGE_DESCRIPTORS;
  if (name !== first) return { equals: { [DESCRIPTOR_KEY]: name } };
  return { notEquals: Object.fromEntries(later.map((other) => [DESCRIPTOR_KEY, other])) };
}

/** `filter` further restricted to `where` (both must hold). */
export function restrictFilter(filter: VectorFilter, where: VectorFilter | undefined): VectorFilter {
  if (!where) return filter;
  return {
    ...filter,
    equals: { ...filter.equals, ...where.equals },
    notEquals: { ...filter.notEquals, ...where.notEquals },
  };
}

/** An image query's vector in one descriptor space, and the records it may be compared with (undefined: all). */
export interface SpaceQuery {
  descriptor: ImageDescriptorName;
  vector: Float32Array;
  where?: VectorFilter;
}

/**
 * The descriptor spaces of the image store. New vectors are written in `current`; an archive not yet re-embedded
 * (`npm run argus -- dataprep reembed`) also holds older ones. A query image is then embedded once per space present
 * and each vector compared only with the records of its own space, so a half-converted archive still ranks right.
 */
export class ImageSpaces {
  private known?: { others: ImageDescriptorName[]; at: number };

  constructor(
    private readonly store: VectorStore,
    private readonly embedder: ImageEmbedder,
    readonly current: ImageDescriptorName = CURRENT_IMAGE_DESCRIPTOR,
    private readonly now: () => number = Date.now,
  ) {}

  /** Descriptors other than the current one that stored records use (asked of the store at most every SPACES_TTL_MS). */
  async others(): Promise<ImageDescriptorName[]> {
    if (this.known && this.now() - this.known.at < SPACES_TTL_MS) return this.known.others;
    const candidates = IMAGE_DESCRIPTORS.filter((name) => name !== this.current);
    const counts = await Promise.all(candidates.map((name) => this.store.count(descriptorFilter(name))));
    const others = candidates.filter((_, i) => counts[i] > 0);
    this.known = { others, at: this.now() };
    return others;
  }

  /** The query image in every space present: only the current one (no restriction) unless older records remain. */
  async queries(image: RgbImage): Promise<SpaceQuery[]> {
    const others = await this.others();
    const names = [this.current, ...others];
    const vectors = await Promise.all(names.map((name) => imageDescriptor(this.embedder, name).embed([image])));
    return names.map((descriptor, i) => ({
      descriptor,
      vector: vectors[i][0],
      where: others.length > 0 ? descriptorFilter(descriptor) : undefined,
    }));
  }
}
