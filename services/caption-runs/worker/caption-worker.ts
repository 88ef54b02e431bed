import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { CaptionRun, CaptionRunStatus } from '../../../operator/api/index.js';
import { updateStatusWithRetry, type ResourceStore, type Worker } from '../../../operator/ports/index.js';
import type { Detection, Detector } from '../../lib/inference/index.js';
import type { Logger } from '../../lib/log/index.js';
import { decodeImage, imageDimensions } from '../../lib/media/index.js';
import type { AllowList } from '../../lib/outbound/index.js';
import { OFFLINE_CAPTIONER } from '../catalog/pipelines.js';
import { runIdOf } from '../runs/caption-runs.js';
import type { RunReport } from '../metrics/run-report.js';
import { metricsTopic, mqttTopic } from '../runs/run-ids.js';
import { UnsealError, withPassword, type CredentialSealer } from '../runs/stream-credentials.js';
import { resolveStreamSource, type HostResolver, type StreamSource } from '../runs/stream-source.js';
import { matchRules } from './alert-rules.js';
import { offlineCaptioner, vlmCaptioner, type Captioner, type VisionModel } from './captioners.js';
import { FrameSession } from './frame-source.js';
import { logPostFailure, postJson, type CaptionPublisher, type JsonTarget } from './outputs.js';

/** How the worker paces itself against the stream; every figure is configuration (tests make them small). */
export interface WorkerTiming {
  /** RTSP socket I/O time-out (connect and each read). */
  ioTimeoutMs: number;
  /** No frame for this long ends the session (a stalled stream), which is then opened again. */
  idleTimeoutMs: number;
  /** Wait before the `attempt`th reopening in a row (1, 2, …): back-off. */
  backoffMs(attempt: number): number;
  /** A run that never read a frame fails after this many sessions without one (a bad URL); once it ran, never. */
  startAttempts: number;
  /** Progress (counters) is written to status at most this often; phase changes at once. */
  statusIntervalMs: number;
}

/** The default pacing: 10 s I/O time-out, 15 s stall, back-off 1 s doubling to 30 s, 5 start attempts, status every 5 s. */
export const DEFAULT_TIMING: WorkerTiming = {
  ioTimeoutMs: 10_000,
  idleTimeoutMs: 15_000,
  backoffMs: (attempt) => Math.min(30_000, 1000 * 2 ** Math.max(0, attempt - 1)),
  startAttempts: 5,
  statusIntervalMs: 5000,
};

/** What the caption worker needs; main.ts builds the real parts. */
export interface CaptionWorkerDeps {
  resources: ResourceStore;
  logger: Logger;
  ffmpegPath: string;
  /** The detector model called `name` (loaded once and shared by runs). */
  detector(name: string): Promise<Detector>;
  /** A VLM client for the model called `name`; undefined when no VLM is configured. */
  vlm?: (model: string) => VisionModel;
  vlmSettings: { temperature: number; imageMaxSide: number };
  publisher: CaptionPublisher;
  /** caption-qa's `/api/embeddings` (each caption with its frame); undefined: not sent. */
  captionQa?: JsonTarget;
  /** alert-dispatch's `/api/v1/alerts` (alert rules); undefined: rules are not raised (logged once per run). */
  alerts?: JsonTarget;
  mediaRoot?: string;
  /** Opens the runs' sealed stream passwords; undefined: a run with one fails, saying why. */
  credentials?: CredentialSealer;
  rtspAllow?: AllowList;
  resolveHost?: HostResolver;
  timing?: WorkerTiming;
  clock?: () => number;
}

const MAX_FRAME_BYTES = 16 * 1024 * 1024;
const ERROR_MAX = 1000;

/** A failure the run cannot get past (no VLM, no detector, a source refused): the run ends Failed. */
class RunFailure extends Error {}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The caption worker (`CAPTION_RUN_WORKER`): runs one CaptionRun until its signal fires. It reads the stream with
 * ffmpeg (RTSP over TCP, I/O time-out, stall detection), opens it again with back-off when it drops (a camera
 * reboot), samples `frameRate` frames per second, runs the detector on each chunk's last frame when the pipeline has
 * detection, captions every chunk of `chunkSize` frames (VLM, else offline from detections), publishes each caption
 * on `live-video-captioning/{runId}` (QoS 1), posts it with its frame to caption-qa and raises matching alert rules
 * to alert-dispatch. Status: phase Starting → Running ⇄ Reconnecting, Failed (a stream that never gave a frame after
 * `startAttempts` tries, no VLM, no detector), Stopped (after the signal, when the run was asked to stop); counters.
 */
export function captionRunWorker(deps: CaptionWorkerDeps): Worker {
  return async ({ namespace, name, signal }) => {
    const run = await deps.resources.get('CaptionRun', namespace, name);
    if (!run) return;
    await new RunLoop(deps, run, signal).run();
  };
}

class RunLoop {
  private readonly clock: () => number;
  private readonly timing: WorkerTiming;
  private readonly runId: string;
  private readonly topic: string;
  private framesProcessed: number;
  private captionsPublished: number;
  private reconnects: number;
  private lastCaptionTime: string | undefined;
  private lastError: string | undefined;
  private lastWrite = 0;
  private previousDetections: Detection[] | undefined;
  private runStart: number;
  private alertsUnconfiguredLogged = false;
  /** The progress write in flight, if any. */
  private progressWrite: Promise<void> | undefined;
  /** This worker's session and its counts (what it reports on MQTT), apart from the run's totals in status. */
  private readonly session = randomBytes(8).toString('hex');
  private readonly sessionCounts = {
    framesAtStart: 0,
    captionsAtStart: 0,
    reconnectsAtStart: 0,
    dropped: 0,
    captionQa: { posted: 0, failed: 0 },
    alerts: { raised: 0, failed: 0 },
  };

  constructor(
    private readonly deps: CaptionWorkerDeps,
    private readonly resource: CaptionRun,
    private readonly signal: AbortSignal,
  ) {
    this.clock = deps.clock ?? Date.now;
    this.timing = deps.timing ?? DEFAULT_TIMING;
    this.runId = runIdOf(resource);
    this.topic = mqttTopic(this.runId);
    const status = resource.status ?? {};
    // A run resumed after a restart goes on counting.
    this.framesProcessed = status.framesProcessed ?? 0;
    this.captionsPublished = status.captionsPublished ?? 0;
    this.reconnects = status.reconnects ?? 0;
    this.lastCaptionTime = status.lastCaptionTime;
    this.sessionCounts.framesAtStart = this.framesProcessed;
    this.sessionCounts.captionsAtStart = this.captionsPublished;
    this.sessionCounts.reconnectsAtStart = this.reconnects;
    this.runStart = this.clock();
  }

  /** Publishes this session's figures on the run's metrics topic (QoS 0: the next report carries them anyway). */
  private report(event: RunReport['event'], latencyMs?: number): void {
    const counts = this.sessionCounts;
    const report: RunReport = {
      event,
      session: this.session,
      frames: this.framesProcessed - counts.framesAtStart,
      captions: this.captionsPublished - counts.captionsAtStart,
      dropped_frames: counts.dropped,
      reconnects: this.reconnects - counts.reconnectsAtStart,
      ...(latencyMs === undefined ? {} : { latency_ms: latencyMs }),
      caption_qa: { ...counts.captionQa },
      alerts: { ...counts.alerts },
      timestamp: this.clock(),
    };
    this.deps.publisher.report(metricsTopic(this.runId), JSON.stringify(report));
  }

  private get log() {
    return this.deps.logger;
  }

  private async writeStatus(change: Partial<CaptionRunStatus>): Promise<void> {
    // A progress write still in flight lands first: writes never overtake each other.
    await this.progressWrite;
    this.lastWrite = this.clock();
    const { namespace, name } = this.resource.metadata;
    try {
      await updateStatusWithRetry(this.deps.resources, 'CaptionRun', namespace, name, (latest) => ({
        ...latest.status,
        pipelineId: latest.metadata.uid,
        peerId: latest.spec.peerId,
        mqttTopic: this.topic,
        framesProcessed: this.framesProcessed,
        captionsPublished: this.captionsPublished,
        reconnects: this.reconnects,
        ...(this.lastCaptionTime ? { lastCaptionTime: this.lastCaptionTime } : {}),
        ...(this.lastError ? { lastError: this.lastError.slice(0, ERROR_MAX) } : {}),
        ...change,
      }));
    } catch (error) {
      // Status is best effort: the run goes on, the next write carries the counters.
      this.log.warn('caption run status write failed', { runId: this.runId, error: (error as Error).message });
    }
  }

  /**
   * Writes the counters in the background, one write at a time (a write still in flight makes this one unneeded):
   * the caption loop never waits for the store (a disk, the API server), so captions do not queue behind it.
   */
  private writeProgress(): void {
    if (this.progressWrite) return;
    this.progressWrite = this.writeStatus({}).finally(() => (this.progressWrite = undefined));
  }

  async run(): Promise<void> {
    const spec = this.resource.spec;
    if (spec.stopRequested) return this.finish('Stopped', 'stopped on request');
    await this.writeStatus({
      phase: 'Starting',
      message: 'opening the stream',
      startTime: this.resource.status?.startTime ?? iso(this.clock()),
    });
    let source: StreamSource;
    let captioner: Captioner;
    let detector: Detector | undefined;
    try {
      source = await resolveStreamSource(this.streamUrl(), {
        mediaRoot: this.deps.mediaRoot,
        allow: this.deps.rtspAllow,
        resolve: this.deps.resolveHost,
      }).catch((error: Error) => {
        throw new RunFailure(`rtspUrl ${error.message}`);
      });
      captioner = this.captioner();
      if (spec.pipelineType === 'detection' || spec.detectionModel) {
        const model = spec.detectionModel!;
        detector = await this.deps.detector(model).catch((error: Error) => {
          throw new RunFailure(`detection model ${model} could not be loaded: ${error.message}`);
        });
      }
    } catch (error) {
      if (!(error instanceof RunFailure)) throw error;
      this.lastError = error.message;
      return this.finish('Failed', error.message);
    }
    await this.stream(source, captioner, detector);
  }

  /** The stream's URL with its password opened (RunFailure when it cannot be). */
  private streamUrl(): string {
    const { rtspUrl, rtspPassword } = this.resource.spec;
    if (rtspPassword === undefined) return rtspUrl;
    if (!this.deps.credentials) {
      throw new RunFailure('the stream password is sealed but CAPTION_RUNS_CREDENTIALS_KEY is not set here');
    }
    try {
      return withPassword(rtspUrl, this.deps.credentials.open(rtspPassword, rtspUrl));
    } catch (error) {
      if (error instanceof UnsealError) throw new RunFailure(error.message);
      throw error;
    }
  }

  private captioner(): Captioner {
    const spec = this.resource.spec;
    const threshold = spec.detectionThreshold ?? 0.5;
    if (spec.modelName === OFFLINE_CAPTIONER) return offlineCaptioner(OFFLINE_CAPTIONER, threshold);
    if (!this.deps.vlm) throw new RunFailure(`no VLM is configured (VLM_BASE_URL) for model ${spec.modelName}`);
    return vlmCaptioner(this.deps.vlm(spec.modelName), {
      model: spec.modelName,
      prompt: spec.prompt,
      maxTokens: spec.maxTokens,
      ...this.deps.vlmSettings,
    });
  }

  private async stream(source: StreamSource, captioner: Captioner, detector: Detector | undefined): Promise<void> {
    const spec = this.resource.spec;
    const chunkSize = spec.chunkSize ?? 1;
    let everRan = this.framesProcessed > 0;
    let failedInRow = 0;
    let dropped = 0;
    while (!this.signal.aborted) {
      const session = new FrameSession({
        ffmpegPath: this.deps.ffmpegPath,
        source,
        frameRate: spec.frameRate ?? 1,
        width: spec.frameWidth,
        height: spec.frameHeight,
        ioTimeoutMs: this.timing.ioTimeoutMs,
        idleTimeoutMs: this.timing.idleTimeoutMs,
        queueFrames: Math.max(2, chunkSize * 2),
        maxFrameBytes: MAX_FRAME_BYTES,
        clock: this.clock,
      });
      const stop = () => void session.close();
      this.signal.addEventListener('abort', stop, { once: true });
      let chunk: Buffer[] = [];
      let sessionFrames = 0;
      try {
        for (let frame = await session.next(); frame; frame = await session.next()) {
          if (sessionFrames++ === 0) {
            everRan = true;
            failedInRow = 0;
            await this.writeStatus({ phase: 'Running', message: 'captioning' });
          }
          this.framesProcessed++;
          chunk.push(frame.jpeg);
          if (chunk.length < chunkSize) continue;
          this.sessionCounts.dropped = dropped + session.dropped;
          await this.caption(chunk, frame.readAt, captioner, detector);
          chunk = [];
          if (this.clock() - this.lastWrite >= this.timing.statusIntervalMs) this.writeProgress();
        }
      } finally {
        this.signal.removeEventListener('abort', stop);
        await session.close();
      }
      dropped += session.dropped;
      this.sessionCounts.dropped = dropped;
      if (this.signal.aborted) break;
      const reason = session.ended?.reason ?? 'the stream ended';
      this.lastError = reason;
      failedInRow = sessionFrames > 0 ? 1 : failedInRow + 1;
      if (!everRan && failedInRow >= this.timing.startAttempts) {
        return this.finish('Failed', `the stream could not be read after ${failedInRow} attempts: ${reason}`);
      }
      const wait = this.timing.backoffMs(failedInRow);
      this.log.warn('caption run stream lost; reconnecting', { runId: this.runId, reason, wait_ms: wait });
      await this.writeStatus({ phase: 'Reconnecting', message: `stream lost (${reason}); reconnecting` });
      try {
        await delay(wait, undefined, { signal: this.signal });
      } catch {
        break;
      }
      this.reconnects++;
      this.report('reconnect');
    }
    // Stopped by the signal: on request (DELETE) the run ends Stopped; a process shutting down leaves it to resume.
    const latest = await this.deps.resources
      .get('CaptionRun', this.resource.metadata.namespace, this.resource.metadata.name)
      .catch(() => undefined);
    if (latest?.spec.stopRequested) await this.finish('Stopped', 'stopped on request');
    else await this.writeStatus({});
  }

  private async caption(
    frames: Buffer[],
    readAt: number,
    captioner: Captioner,
    detector: Detector | undefined,
  ): Promise<void> {
    const spec = this.resource.spec;
    const last = frames[frames.length - 1];
    let width: number;
    let height: number;
    let detections: Detection[] = [];
    try {
      if (detector) {
        const image = await decodeImage(last);
        ({ width, height } = image);
        detections = await detector.detect(image, spec.detectionThreshold ?? 0.5);
      } else {
        const size = await imageDimensions(last);
        width = size?.width ?? 0;
        height = size?.height ?? 0;
      }
    } catch (error) {
      this.lastError = `a frame could not be analysed: ${(error as Error).message}`;
      this.log.warn('caption run frame skipped', { runId: this.runId, error: (error as Error).message });
      return;
    }
    let text: string;
    try {
      text = await captioner.caption(
        { frames, width, height, detections, previousDetections: this.previousDetections },
        this.signal,
      );
    } catch (error) {
      if (this.signal.aborted) return;
      this.lastError = `captioning failed: ${(error as Error).message}`;
      this.log.warn('caption run chunk not captioned', { runId: this.runId, error: (error as Error).message });
      return;
    }
    this.previousDetections = detections;
    const blob = last.toString('base64');
    const frameId = this.framesProcessed;
    const metadata = {
      result: text,
      frame_id: frameId,
      timestamp: readAt,
      timestamp_seconds: Math.max(0, (readAt - this.runStart) / 1000),
      resolution: { width, height },
      img_format: 'jpeg',
      model: captioner.model,
      latency_ms: Math.max(0, this.clock() - readAt),
      detections: detections.map((d) => ({ label: d.label, score: d.score, box: d.box })),
    };
    try {
      await this.deps.publisher.publish(this.topic, JSON.stringify({ metadata, blob }));
    } catch (error) {
      this.lastError = `publishing failed: ${(error as Error).message}`;
      this.log.warn('caption not published', { runId: this.runId, error: (error as Error).message });
      return;
    }
    this.captionsPublished++;
    this.lastCaptionTime = iso(this.clock());
    await Promise.all([this.toCaptionQa(metadata, blob), this.raiseAlerts(text, detections, metadata, blob)]);
    this.report('caption', metadata.latency_ms);
  }

  private async toCaptionQa(metadata: Record<string, unknown>, blob: string): Promise<void> {
    const target = this.deps.captionQa;
    if (!target) return;
    const counts = this.sessionCounts.captionQa;
    const { detections: _detections, ...known } = metadata;
    try {
      await postJson(
        target,
        {
          image_data: blob,
          metadata: { ...known, run_id: this.runId, camera: this.resource.spec.runName || this.runId },
        },
        this.signal,
      );
      counts.posted++;
    } catch (error) {
      if (this.signal.aborted) return;
      logPostFailure(this.log, 'posting the caption to caption-qa', this.runId, error, ++counts.failed);
    }
  }

  private async raiseAlerts(
    caption: string,
    detections: Detection[],
    metadata: Record<string, unknown>,
    blob: string,
  ): Promise<void> {
    const matches = matchRules(this.resource.spec.alerts ?? [], caption, detections);
    if (matches.length === 0) return;
    const target = this.deps.alerts;
    if (!target) {
      if (!this.alertsUnconfiguredLogged) {
        this.log.warn('alert rules matched but no alert-dispatch is configured', { runId: this.runId });
        this.alertsUnconfiguredLogged = true;
      }
      return;
    }
    const counts = this.sessionCounts.alerts;
    await Promise.all(
      matches.map(async ({ rule, why }) => {
        try {
          await postJson(
            target,
            {
              alert_type: 'caption_rule',
              alert_name: rule.name,
              source_id: this.runId,
              reason: `${why}: ${caption}`.slice(0, 10_000),
              timestamp: iso(metadata.timestamp as number),
              metadata: {
                run_id: this.runId,
                rule: rule.name,
                frame_id: metadata.frame_id,
                caption,
                labels: [...new Set(detections.map((d) => d.label))],
              },
              payloads: [{ kind: 'image', encoding: 'base64', mime_type: 'image/jpeg', data_base64: blob }],
            },
            this.signal,
          );
          counts.raised++;
        } catch (error) {
          if (this.signal.aborted) return;
          logPostFailure(this.log, 'raising the alert', this.runId, error, ++counts.failed);
        }
      }),
    );
  }

  private async finish(phase: 'Stopped' | 'Failed', message: string): Promise<void> {
    if (phase === 'Failed') this.log.warn('caption run failed', { runId: this.runId, reason: message });
    await this.writeStatus({ phase, message: message.slice(0, ERROR_MAX), finishedTime: iso(this.clock()) });
    this.report('ended');
  }
}
