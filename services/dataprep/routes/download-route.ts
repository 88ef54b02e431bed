import Joi from 'joi';
import rangeParser from 'range-parser';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { ACCEPTED_EXTENSIONS, mediaTypeFromName } from '../../lib/media/index.js';
import type { ByteRange } from '../../lib/storage/index.js';
import { referencedDownload, storedDownload } from '../media/media-access.js';
import type { DataprepServices } from '../runtime/services.js';
import { ifRangeHolds, isNotModified, validatorFields } from './conditional-get.js';
import { bucketName, errorBody, resolveBucket, videoId } from './schemas.js';

/** What a download is served as: the type of the media stored (a video or any accepted image). */
const SERVED_MEDIA_TYPES = [
  ...new Set(ACCEPTED_EXTENSIONS.flatMap((ext) => mediaTypeFromName(`x.${ext}`)?.mime ?? [])),
];

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

/** The query of GET /media/download as validated. */
interface DownloadQuery {
  video_id: string;
  bucket_name?: string;
  download: boolean;
}

/** GET /media/download: streams a stored or referenced media file with validators, conditional GETs and ranges. */
export function downloadMediaRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/media/download',
    summary: 'Stream or download a media file (HTTP Range and conditional requests supported)',
    description:
      'Answers carry ETag, Last-Modified and Cache-Control. If-None-Match (or, without it, If-Modified-Since) answers ' +
      '304 when the client copy is current; a Range is served only when If-Range, if sent, names the current strong ' +
      'ETag or exact Last-Modified, else the whole file. HEAD answers the headers of the GET (Range ignored).',
    tags: ['media'],
    request: {
      query: Joi.object<DownloadQuery, true>({
        video_id: videoId().required(),
        bucket_name: bucketName(),
        download: Joi.boolean().default(false),
      }),
      headers: {
        Range: 'Single byte range: bytes=<start>-<end>, bytes=<start>- or bytes=-<count>',
        'If-None-Match': 'ETags the client holds, or * (weak comparison): 304 when one is current',
        'If-Modified-Since': 'HTTP-date: 304 when not modified since (ignored with If-None-Match)',
        'If-Range': 'Strong ETag or exact Last-Modified: the Range is served only while it is current, else 200',
      },
    },
    responses: {
      200: { description: 'The whole file, as the type it was stored as', contentType: SERVED_MEDIA_TYPES },
      206: { description: 'The requested range', contentType: SERVED_MEDIA_TYPES },
      304: { description: 'Not modified (If-None-Match or If-Modified-Since): no body' },
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
      const media = stored ? await storedDownload(services, stored) : await referencedDownload(services, bucket, id);
      if (!media) throw new HttpError(404, `Video ${id} not found in bucket ${bucket}`);
      const fields = validatorFields(media.validators, new Date());
      const headers = {
        ETag: fields.etag,
        'Last-Modified': fields.lastModified,
        'Cache-Control': fields.cacheControl,
        'Accept-Ranges': 'bytes',
      };
      // RFC 9110 §13.2.2: a current copy is answered 304 before any range is looked at.
      const conditions = {
        ifNoneMatch: header(ctx, 'if-none-match'),
        ifModifiedSince: header(ctx, 'if-modified-since'),
      };
      if (isNotModified(conditions, fields)) {
        ctx.set(headers);
        ctx.status = 304;
        return;
      }
      // Range is defined for GET only (RFC 9110 §14.2): HEAD describes the whole file.
      const rangeApplies = ctx.method === 'GET' && media.size > 0 && ifRangeHolds(header(ctx, 'if-range'), fields);
      const range = rangeApplies ? requestedRange(header(ctx, 'range'), media.size) : undefined;
      if (range === 'unsatisfiable') {
        throw new HttpError(416, 'Requested range not satisfiable', { 'Content-Range': `bytes */${media.size}` });
      }
      // HEAD reads nothing from storage.
      const body = ctx.method === 'GET' ? await media.open(range) : undefined;
      ctx.set(headers);
      // Koa's attachment() encodes any filename safely (RFC 6266 / 5987).
      if (download) ctx.attachment(media.filename);
      ctx.type = media.contentType;
      if (range) {
        ctx.status = 206;
        ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${media.size}`);
      } else {
        ctx.status = 200;
      }
      if (body) ctx.body = body;
      // Set after the body: Koa drops Content-Length when a stream body is assigned.
      ctx.length = range ? range.end - range.start + 1 : media.size;
    },
  });
}

/** A request header's value, undefined when absent or empty. */
function header(ctx: { get(name: string): string }, name: string): string | undefined {
  return ctx.get(name) || undefined;
}
