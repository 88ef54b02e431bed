import { randomBytes } from 'node:crypto';
import { argusAuthorization, outboundRequest, UNRESTRICTED } from '../../lib/outbound/index.js';
import { answerFailed, callFailed, ServiceCallError } from './service-error.js';

/** A clip or snapshot to index, with the tags search filters on. */
export interface MediaToIndex {
  bytes: Buffer;
  /** `<event id>.mp4` or `.jpg`. */
  filename: string;
  contentType: 'video/mp4' | 'image/jpeg';
  tags: string[];
}

/** Where the search service put it. */
export interface IndexedMedia {
  videoId: string;
  bucketName: string;
  message: string;
}

/** The search service (dataprep) as camera-rules uses it: media in, findable by its tags. */
export interface SearchIndex {
  add(media: MediaToIndex, signal?: AbortSignal): Promise<IndexedMedia>;
}

/** How to reach dataprep. */
export interface DataprepIndexOptions {
  /** API root with its base path, e.g. `http://127.0.0.1:6007/v1/dataprep`. */
  url: string;
  bucket: string;
  /** Bound of one upload, which dataprep answers once the media is embedded. */
  timeoutMs: number;
  /** Seconds between sampled frames of a clip (dataprep's frame_interval, 1–60). */
  frameInterval: number;
  /** The platform's API keys: the first is sent (none: no Authorization header). */
  apiKeys?: readonly string[];
}

const DUPLICATE = /Identical content already exists as video_id (\S+) in bucket (\S+)/;

/**
 * dataprep over its HTTP API: `POST /media/upload?bucket_name=&frame_interval=&tags=…` (multipart, field `file`),
 * answered 201 once embedded. A 409 naming identical content already stored (a retried upload whose first try got
 * through, or the same clip of two events) is that media. Unreachable, time-outs, 5xx: retryable ServiceCallError.
 */
export class DataprepSearchIndex implements SearchIndex {
  constructor(private readonly options: DataprepIndexOptions) {}

  async add(media: MediaToIndex, signal?: AbortSignal): Promise<IndexedMedia> {
    const boundary = `camera-rules-${randomBytes(12).toString('hex')}`;
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${media.filename.replace(/["\r\n]/g, '_')}"\r\n` +
          `Content-Type: ${media.contentType}\r\n\r\n`,
      ),
      media.bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const query = new URLSearchParams({
      bucket_name: this.options.bucket,
      frame_interval: String(this.options.frameInterval),
    });
    // dataprep splits a tags value at commas: a comma inside one tag would make two.
    for (const tag of media.tags) query.append('tags', tag.replaceAll(',', ' '));
    let response;
    try {
      response = await outboundRequest(`${this.options.url}/media/upload?${query}`, {
        policy: UNRESTRICTED,
        method: 'POST',
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          ...argusAuthorization(this.options.apiKeys ?? []),
        },
        body,
        timeoutMs: this.options.timeoutMs,
        maxBytes: 64 * 1024,
        signal,
      });
    } catch (error) {
      throw callFailed('dataprep', error);
    }
    if (response.status === 201 || response.status === 200) {
      let answer: Record<string, unknown>;
      try {
        answer = JSON.parse((await response.bytes()).toString('utf8')) as Record<string, unknown>;
      } catch (error) {
        throw callFailed('dataprep', error);
      }
      if (typeof answer.video_id !== 'string')
        throw new ServiceCallError('dataprep answered without a video_id', false);
      return {
        videoId: answer.video_id,
        bucketName: String(answer.bucket_name ?? this.options.bucket),
        message: String(answer.message ?? 'indexed'),
      };
    }
    const failure = await answerFailed('dataprep', response);
    const duplicate = DUPLICATE.exec(failure.message);
    if (response.status === 409 && duplicate) {
      return {
        videoId: duplicate[1],
        bucketName: duplicate[2],
        message: `already indexed as video_id ${duplicate[1]}`,
      };
    }
    throw failure;
  }
}
