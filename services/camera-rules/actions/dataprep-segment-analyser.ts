import { readFile } from 'node:fs/promises';
import { isObject } from '../../lib/json/index.js';
import { argusAuthorization, outboundRequest, UNRESTRICTED } from '../../lib/outbound/index.js';
import {
  SegmentRefusedError,
  type Segment,
  type SegmentAnalyser,
  type SegmentAnalysis,
  type SegmentDetection,
} from '../recorder/segment-analysis.js';
import type { SearchIndex } from './search-index.js';
import { answerFailed, callFailed, ServiceCallError } from './service-error.js';

/** Hits one search of a segment reads (dataprep's top_k maximum). */
const HITS = 100;

/** dataprep's answers to an upload that refuse the file itself (no readable video, too large), not the request. */
const CONTENT_REFUSED = [400, 413, 415, 422];

/** A search hit as far as detections go. */
interface Hit {
  kind?: unknown;
  timestamp?: unknown;
  labels?: unknown;
  label?: unknown;
  bbox?: unknown;
}

/**
 * dataprep as the directory recorder's detector: the segment is uploaded (`POST /media/upload`, tags `camera:<name>`,
 * `source:directory`, `recording:<start>`; embedded with object detection on arrival — so every new recording is
 * searchable), then its detections are read back with `POST /search` restricted to that video: frame hits carry the
 * classes detected in each sampled frame (`labels`, score ≥ 0.4) and object hits a crop's `label` and `bbox`.
 */
export class DataprepSegmentAnalyser implements SegmentAnalyser {
  constructor(
    private readonly index: SearchIndex,
    private readonly options: { url: string; timeoutMs: number; apiKeys?: readonly string[] },
  ) {}

  async analyse(segment: Segment, signal?: AbortSignal): Promise<SegmentAnalysis> {
    const name = `${segment.camera}-${new Date(segment.start * 1000).toISOString().replace(/[:.]/g, '-')}.mp4`;
    const indexed = await this.index
      .add(
        {
          bytes: await readFile(segment.file),
          filename: name,
          contentType: 'video/mp4',
          tags: [`camera:${segment.camera}`, 'source:directory', `recording:${segment.start}`],
        },
        signal,
      )
      .catch((error: unknown) => {
        if (error instanceof ServiceCallError && CONTENT_REFUSED.includes(error.status ?? 0)) {
          throw new SegmentRefusedError(error.message);
        }
        throw error;
      });
    const [frames, objects] = await Promise.all([
      this.search(indexed.videoId, indexed.bucketName, 'frame', signal),
      this.search(indexed.videoId, indexed.bucketName, 'object', signal),
    ]);
    return { videoId: indexed.videoId, bucketName: indexed.bucketName, detections: detectionsOf(frames, objects) };
  }

  private async search(videoId: string, bucket: string, kind: string, signal?: AbortSignal): Promise<Hit[]> {
    let response;
    try {
      response = await outboundRequest(`${this.options.url}/search`, {
        policy: UNRESTRICTED,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...argusAuthorization(this.options.apiKeys ?? []) },
        body: JSON.stringify({
          query: 'objects',
          bucket_name: bucket,
          video_ids: [videoId],
          kinds: [kind],
          top_k: HITS,
        }),
        timeoutMs: this.options.timeoutMs,
        maxBytes: 4 * 1024 * 1024,
        signal,
      });
    } catch (error) {
      throw callFailed('dataprep', error);
    }
    if (response.status !== 200) throw await answerFailed('dataprep', response);
    let answer: unknown;
    try {
      answer = JSON.parse((await response.bytes()).toString('utf8'));
    } catch (error) {
      throw callFailed('dataprep', error);
    }
    if (!isObject(answer) || !Array.isArray(answer.hits)) {
      throw new ServiceCallError('dataprep answered a search without hits', false);
    }
    return answer.hits.filter(isObject);
  }
}

/** Classes by first appearance, each with the moments that show it and one crop's box. */
function detectionsOf(frames: Hit[], objects: Hit[]): SegmentDetection[] {
  const byLabel = new Map<string, SegmentDetection>();
  const moments = (hit: Hit) => (typeof hit.timestamp === 'number' && hit.timestamp >= 0 ? hit.timestamp : 0);
  const seen = (label: string, at: number) => {
    const detection = byLabel.get(label) ?? { label, seen: [] };
    if (!detection.seen.includes(at)) detection.seen.push(at);
    byLabel.set(label, detection);
    return detection;
  };
  for (const frame of frames) {
    const labels = Array.isArray(frame.labels) ? frame.labels : [];
    for (const label of labels) if (typeof label === 'string' && label) seen(label, moments(frame));
  }
  for (const object of objects) {
    if (typeof object.label !== 'string' || !object.label) continue;
    const detection = seen(object.label, moments(object));
    if (!detection.box && Array.isArray(object.bbox) && object.bbox.length === 4) {
      detection.box = object.bbox.map(Number);
    }
  }
  for (const detection of byLabel.values()) detection.seen.sort((a, b) => a - b);
  return [...byLabel.values()].sort((a, b) => a.seen[0] - b.seen[0] || a.label.localeCompare(b.label));
}
