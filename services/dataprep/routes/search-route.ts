import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import {
  ACCEPTED_IMAGE_EXTENSIONS,
  decodeImage,
  detectMediaType,
  UndecodableImageError,
} from '../../lib/media/index.js';
import { findFrameMedia } from '../frames/frame-media.js';
import { isReservedMetadataKey } from '../pipeline/metadata.js';
import { FrameNotFoundError, type HitKind, type SearchQuery } from '../search/index.js';
import { loadImageSource } from '../ingest/image-source.js';
import type { DataprepServices } from '../runtime/services.js';
import { clientGone } from './client-gone.js';
import { bucketName, errorBody, videoId } from './schemas.js';

const USER_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const scalar = () => Joi.alternatives(Joi.string().max(1024), Joi.number(), Joi.boolean());
const isoTime = () => Joi.date().iso();

/** A stored frame to search with (`like`): a hit of an earlier search. */
interface LikeFrame {
  bucket_name: string;
  video_id: string;
  timestamp: number;
}

type MetadataScalar = string | number | boolean;

/** The body of POST /search as validated (defaults applied): exactly one of query, image_base64, image_url, like. */
interface SearchBody {
  query?: string;
  image_base64?: string;
  image_url?: string;
  like?: LikeFrame;
  bucket_name?: string;
  video_ids?: string[];
  tags?: string[];
  tags_match: 'any' | 'all';
  labels?: string[];
  labels_match: 'any' | 'all';
  ingested_after?: Date;
  ingested_before?: Date;
  from_seconds?: number;
  to_seconds?: number;
  metadata?: Record<string, MetadataScalar | MetadataScalar[]>;
  kinds: HitKind[];
  top_k: number;
  min_score?: number;
  group_by_video: boolean;
  collapse: boolean;
}

/** The body of POST /search (also its OpenAPI schema). */
export const searchBody = () =>
  Joi.object<SearchBody, true>({
    query: Joi.string().trim().min(1).max(1000).description('Words to search for'),
    image_base64: Joi.string().description('An image to search with: bare base64 or a data: URL (50 MB)'),
    image_url: Joi.string().max(8192).description('An image to search with, downloaded as POST /media/ingest does'),
    like: Joi.object<LikeFrame, true>({
      bucket_name: bucketName().required(),
      video_id: videoId().required(),
      timestamp: Joi.number().min(0).required(),
    }).description('Frames similar to this stored frame (a hit of an earlier search), itself left out'),
    bucket_name: bucketName(),
    video_ids: Joi.array().items(videoId()).min(1).max(100).unique(),
    tags: Joi.array().items(Joi.string().max(256)).min(1).max(100),
    tags_match: Joi.string().valid('any', 'all').default('any'),
    labels: Joi.array().items(Joi.string().max(64)).min(1).max(80).description('Detected object classes'),
    labels_match: Joi.string().valid('any', 'all').default('any'),
    ingested_after: isoTime(),
    ingested_before: isoTime(),
    from_seconds: Joi.number().min(0),
    to_seconds: Joi.number().min(Joi.ref('from_seconds', { adjust: (v) => v ?? 0 })),
    metadata: Joi.object()
      .pattern(Joi.string().pattern(USER_KEY), Joi.alternatives(scalar(), Joi.array().items(scalar()).min(1).max(100)))
      .max(20)
      .custom((value: Record<string, unknown>, helpers) => {
        const reserved = Object.keys(value).filter(isReservedMetadataKey);
        if (reserved.length === 0) return value;
        return helpers.message({
          custom: `metadata keys ${reserved.join(', ')} are reserved: filter them with the request's own fields`,
        });
      })
      .description('User metadata of directory ingests: a value must equal, a list names the values allowed'),
    kinds: Joi.array()
      .items(Joi.string().valid('frame', 'object', 'summary'))
      .min(1)
      .unique()
      .default(['frame', 'summary']),
    top_k: Joi.number().integer().min(1).max(100).default(10),
    min_score: Joi.number().min(-1).max(1),
    group_by_video: Joi.boolean().default(false),
    collapse: Joi.boolean().default(false),
  })
    .xor('query', 'image_base64', 'image_url', 'like')
    .messages({
      'object.missing': 'one of query, image_base64, image_url or like is required',
      'object.xor': 'give only one of query, image_base64, image_url or like',
    });

/** A hit as answered (SearchHit): the fields without `?` there are always sent. */
const hitSchema = Joi.object({
  video_id: Joi.string().required(),
  bucket_name: Joi.string().required(),
  kind: Joi.string().valid('frame', 'object', 'summary').required(),
  timestamp: Joi.number().required(),
  frame_id: Joi.number().integer().required(),
  score: Joi.number().required(),
  tags: Joi.array().items(Joi.string()).required(),
  metadata: Joi.object().unknown(true).required(),
  video_name: Joi.string(),
  media_type: Joi.string(),
  label: Joi.string().description('Object hits: the detected class'),
  bbox: Joi.array().items(Joi.number()).description('Object hits: the box [x1, y1, x2, y2] in source pixels'),
  labels: Joi.array().items(Joi.string()),
  description: Joi.string(),
  from_seconds: Joi.number(),
  to_seconds: Joi.number(),
  thumbnail_url: Joi.string().required(),
  video_url: Joi.string()
    .required()
    .description('The download URL with a #t=<seconds> media fragment: plays from the moment'),
});

/** The filters and options of a validated body. */
function toQuery(body: SearchBody): SearchQuery {
  const epoch = (date: Date | undefined) => (date ? date.getTime() / 1000 : undefined);
  return {
    filters: {
      bucketName: body.bucket_name,
      videoIds: body.video_ids,
      tags: body.tags && { values: body.tags, match: body.tags_match },
      labels: body.labels && { values: body.labels, match: body.labels_match },
      ingestedFrom: epoch(body.ingested_after),
      ingestedTo: epoch(body.ingested_before),
      fromSeconds: body.from_seconds,
      toSeconds: body.to_seconds,
      metadata: body.metadata,
    },
    kinds: body.kinds,
    topK: body.top_k,
    minScore: body.min_score,
    groupByVideo: body.group_by_video,
    collapse: body.collapse,
  };
}

/** Decodes the query image of a body, with /media/ingest's rules: sources, size cap, formats, pixel limit. */
async function queryImage(services: DataprepServices, body: Pick<SearchBody, 'image_base64' | 'image_url'>) {
  const type = body.image_base64 !== undefined ? 'image_base64' : 'image_url';
  const { bytes } = await loadImageSource(
    { type, image_base64: body.image_base64, image_url: body.image_url },
    services.imageSources,
  );
  const detected = await detectMediaType(bytes);
  if (!detected || detected.kind !== 'image') {
    throw new HttpError(
      400,
      `${type}: unsupported or undecodable image: accepted formats are ${ACCEPTED_IMAGE_EXTENSIONS.join(', ')}`,
    );
  }
  try {
    return await decodeImage(bytes, { maxPixels: services.config.imageMaxPixels });
  } catch (error) {
    // A picture over the pixel limit is refused from its header (413, through the dataprep error mapping).
    if (error instanceof UndecodableImageError) throw new HttpError(400, `${type}: the image could not be decoded`);
    throw error;
  }
}

/** POST /search: moments of the archive found by words, by an image or by a stored frame. */
export function searchRoute(services: DataprepServices): RouteSpec {
  const search = services.search;
  return defineRoute({
    method: 'post',
    path: '/search',
    summary: 'Find moments by words, by an image or by a stored frame',
    description:
      `Text queries are answered in "${search.mode}" mode: ` +
      (search.mode === 'clip'
        ? 'the text and image embedders share one space, so text is matched against the frames themselves, fused with their descriptions and labels.'
        : 'text is matched against frame descriptions built from the detector (classes, counts, left/centre/right, size) and summaries, and frames holding a class the query names are boosted.'),
    tags: ['search'],
    request: { body: searchBody() },
    responses: {
      200: {
        description: 'Hits, best first',
        schema: Joi.object({
          status: Joi.string().valid('success').required(),
          mode: Joi.string().valid('descriptions', 'clip').required(),
          labels: Joi.array().items(Joi.string()).required().description('Classes the text query named'),
          position: Joi.string().valid('left', 'centre', 'right'),
          count: Joi.number().integer().required(),
          hits: Joi.array().items(hitSchema).required(),
        }),
      },
      400: { description: 'Invalid request, or an image that cannot be used', schema: errorBody() },
      404: { description: '`like` names no stored frame', schema: errorBody() },
      413: { description: 'Query image over the 50 MB cap or the pixel limit', schema: errorBody() },
      502: { description: 'Vector database failure', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const body = ctx.state.body;
      const query = toQuery(body);
      let answer;
      if (body.query !== undefined) answer = await search.byText(query, body.query);
      else if (body.like !== undefined) {
        const { bucket_name: bucket, video_id: id, timestamp } = body.like;
        try {
          answer = await search.likeFrame(query, { bucketName: bucket, videoId: id, timestamp }, async () => {
            const media = await findFrameMedia(services, bucket, id);
            if (!media) throw new FrameNotFoundError(bucket, id, timestamp);
            const { jpeg } = await services.frames.render(media, { t: timestamp }, clientGone(ctx));
            return decodeImage(jpeg);
          });
        } catch (error) {
          if (error instanceof FrameNotFoundError) throw new HttpError(404, error.message);
          throw error;
        }
      } else answer = await search.byImage(query, await queryImage(services, body));
      ctx.body = { status: 'success', ...answer, count: answer.hits.length };
    },
  });
}
