import Joi from 'joi';
import rangeParser from 'range-parser';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import type { ByteRange } from '../../lib/storage/index.js';
import { referencedDownload, storedDownload } from '../media-access.js';
import type { DataprepServices } from '../services.js';
import { bucketName, errorBody, resolveBucket, videoId } from './schemas.js';

const SINGLE_RANGE = /^bytes=(?:(\d+)-(\d*)|-(\d+))$/;

/**
 * The single byte range a Range header asks for: a range, `unsatisfiable`, or undefined for "send everything"
 * (no header, syntax the contract does not accept, several ranges, or a unit other than bytes).
 */
export function requestedRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  const single = header === undefined ? null : SINGLE_RANGE.exec(header.trim());
  if (!single) return undefined;
  // `bytes=5-2` is invalid syntax (RFC 9110), not an unsatisfiable range: the whole file is sent.
  if (single[1] !== undefined && single[2] && Number(single[2]) < Number(single[1])) return undefined;
  const parsed = rangeParser(size, header!.trim(), { combine: true });
  if (parsed === -2) return undefined;
  if (parsed === -1) return 'unsatisfiable';
  if (parsed.type !== 'bytes' || parsed.length !== 1) return undefined;
  return { start: parsed[0].start, end: parsed[0].end };
}

/** GET /media/download: streams a stored media file, honouring a single HTTP byte range. */
export function downloadMediaRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/media/download',
    summary: 'Stream or download a media file (HTTP Range supported)',
    tags: ['media'],
    request: {
      query: Joi.object({
        video_id: videoId().required(),
        bucket_name: bucketName(),
        download: Joi.boolean().default(false),
      }),
      headers: { Range: 'Single byte range: bytes=<start>-<end>, bytes=<start>- or bytes=-<count>' },
    },
    responses: {
      200: { description: 'The whole file', contentType: 'video/mp4' },
      206: { description: 'The requested range', contentType: 'video/mp4' },
      400: { description: 'Missing or invalid parameters', schema: errorBody() },
      404: { description: 'Video or bucket not found', schema: errorBody() },
      416: { description: 'Range not satisfiable', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const { video_id: id, download } = ctx.state.query;
      const bucket = resolveBucket(services, ctx.state.query.bucket_name);
      const stored = await services.catalogue.find(bucket, id);
      // Else media referenced in place, its path checked against the ingest root again (gone or moved: 404).
      const media = stored ? storedDownload(services, stored) : await referencedDownload(services, bucket, id);
      if (!media) throw new HttpError(404, `Video ${id} not found in bucket ${bucket}`);
      const range = media.size > 0 ? requestedRange(ctx.get('range') || undefined, media.size) : undefined;
      if (range === 'unsatisfiable') {
        throw new HttpError(416, 'Requested range not satisfiable', { 'Content-Range': `bytes */${media.size}` });
      }
      const body = await media.open(range);
      ctx.set('Accept-Ranges', 'bytes');
      // Koa's attachment() encodes any filename safely (RFC 6266 / 5987).
      if (download) ctx.attachment(media.filename);
      ctx.type = media.contentType;
      if (range) {
        ctx.status = 206;
        ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${media.size}`);
      } else {
        ctx.status = 200;
      }
      ctx.body = body;
      // Set after the body: Koa drops Content-Length when a stream body is assigned.
      ctx.length = range ? range.end - range.start + 1 : media.size;
    },
  });
}
