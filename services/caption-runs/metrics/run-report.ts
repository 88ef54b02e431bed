import Joi from 'joi';
import { RUN_ID_PATTERN } from '../runs/run-ids.js';

/** Where every run's figures arrive: `live-video-captioning/{runId}/metrics`. */
export const REPORT_TOPIC_FILTER = 'live-video-captioning/+/metrics';

/**
 * What a caption worker publishes on `live-video-captioning/{runId}/metrics` (QoS 0) after each caption, each
 * reopening of the stream and when the run ends: its run's totals since this worker started (cumulative, so a lost
 * report loses nothing but its moment), and the caption's latency. The service's /metrics and metrics WebSocket are
 * built from these, wherever the worker runs (this process, or a pod of the run's Deployment).
 */
export interface RunReport {
  /** What happened: a caption was published, the stream was opened again, the run ended (Stopped or Failed). */
  event: 'caption' | 'reconnect' | 'ended';
  /**
   * The worker's session (random, one per start of the run's worker): the counts below are this session's, from 0,
   * so that a worker started again (a restarted pod or process) is counted on, never twice nor backwards.
   */
  session: string;
  /** Frames read and sampled. */
  frames: number;
  captions: number;
  /** Frames dropped because captioning was slower than the stream. */
  dropped_frames: number;
  reconnects: number;
  /** Frame read → caption published, milliseconds (`caption` reports only). */
  latency_ms?: number;
  /** Posts to caption-qa that succeeded and failed. */
  caption_qa: { posted: number; failed: number };
  /** Alerts raised to alert-dispatch, and the posts that failed. */
  alerts: { raised: number; failed: number };
  /** When it was published, ms since the epoch. */
  timestamp: number;
}

const count = () => Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER).required();

const reportSchema = Joi.object<RunReport, true>({
  event: Joi.string().valid('caption', 'reconnect', 'ended').required(),
  session: Joi.string()
    .pattern(/^[0-9a-f]{1,32}$/)
    .required(),
  frames: count(),
  captions: count(),
  dropped_frames: count(),
  reconnects: count(),
  latency_ms: Joi.number().min(0).max(86_400_000),
  caption_qa: Joi.object({ posted: count(), failed: count() }).required(),
  alerts: Joi.object({ raised: count(), failed: count() }).required(),
  timestamp: Joi.number().integer().min(0).required(),
}).unknown(true);

/**
 * The run and its report from one MQTT message on `live-video-captioning/{runId}/metrics`; undefined when the topic
 * names no run or the payload is not a report (the broker is an input like any other: nothing unchecked is counted).
 */
export function parseRunReport(
  topic: string,
  payload: Buffer | string,
): { runId: string; report: RunReport } | undefined {
  const match = /^live-video-captioning\/([^/]+)\/metrics$/.exec(topic);
  if (!match || !RUN_ID_PATTERN.test(match[1])) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(payload.toString());
  } catch {
    return undefined;
  }
  const { error, value } = reportSchema.validate(body, { convert: false, stripUnknown: true });
  return error ? undefined : { runId: match[1], report: value };
}
