import client from 'prom-client';
import type { RelayCounters } from '../relay/metadata-relay.js';
import type { CaptionEvent } from '../worker/caption-worker.js';
import type { OutputCounters } from '../worker/outputs.js';

/** One run's figures over the last interval, as the WebSocket frames carry them (the original's `fields`). */
export interface RunMetricFields {
  frames_per_second: number;
  captions_per_second: number;
  /** Mean frame read → publish over the interval; null when no caption came. */
  caption_latency_ms: number | null;
  dropped_frames: number;
  reconnects: number;
}

/** One entry of a metrics frame: `{name, tags, fields, timestamp}` (timestamp: ms since the epoch). */
export interface MetricPoint {
  name: 'caption_run';
  tags: { run_id: string };
  fields: RunMetricFields;
  timestamp: number;
}

interface RunTotals {
  frames: number;
  captions: number;
  dropped: number;
  reconnects: number;
  latencySum: number;
  latencyCount: number;
}

const zero = (): RunTotals => ({ frames: 0, captions: 0, dropped: 0, reconnects: 0, latencySum: 0, latencyCount: 0 });

/**
 * Per-run metrics of the caption workers of this process, fed by the worker's hooks: Prometheus counters and a
 * latency histogram on the service's registry (label `run_id`), and interval snapshots for the WebSocket frames.
 */
export class RunMetrics {
  private readonly totals = new Map<string, RunTotals>();
  private readonly atLastSnapshot = new Map<string, RunTotals>();
  private lastSnapshotAt: number;
  private readonly frames: client.Counter<'run_id'>;
  private readonly captions: client.Counter<'run_id'>;
  private readonly dropped: client.Counter<'run_id'>;
  private readonly reconnects: client.Counter<'run_id'>;
  private readonly latency: client.Histogram<'run_id'>;

  constructor(
    registry: client.Registry,
    private readonly clock: () => number,
    sources: { relay?: { counters: RelayCounters; subscriberCount: number }; outputs?: OutputCounters } = {},
  ) {
    this.lastSnapshotAt = clock();
    const registers = [registry];
    this.frames = new client.Counter({
      name: 'caption_runs_frames_total',
      help: 'Frames read from the stream and sampled, per run',
      labelNames: ['run_id'],
      registers,
    });
    this.captions = new client.Counter({
      name: 'caption_runs_captions_total',
      help: 'Captions published, per run',
      labelNames: ['run_id'],
      registers,
    });
    this.dropped = new client.Counter({
      name: 'caption_runs_dropped_frames_total',
      help: 'Frames dropped because captioning was slower than the stream, per run',
      labelNames: ['run_id'],
      registers,
    });
    this.reconnects = new client.Counter({
      name: 'caption_runs_reconnects_total',
      help: 'Times a run opened its stream again, per run',
      labelNames: ['run_id'],
      registers,
    });
    this.latency = new client.Histogram({
      name: 'caption_runs_caption_latency_seconds',
      help: 'Frame read to caption published, per run',
      labelNames: ['run_id'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    });
    const { relay, outputs } = sources;
    if (relay) {
      new client.Counter({
        name: 'caption_runs_relay_messages_total',
        help: 'Caption messages relayed to the metadata stream',
        registers,
        collect() {
          this.reset();
          this.inc(relay.counters.received);
        },
      });
      new client.Counter({
        name: 'caption_runs_relay_missed_total',
        help: 'Messages slow stream readers lost (their buffer was full)',
        registers,
        collect() {
          this.reset();
          this.inc(relay.counters.missed);
        },
      });
      new client.Gauge({
        name: 'caption_runs_stream_subscribers',
        help: 'Open metadata streams',
        registers,
        collect() {
          this.set(relay.subscriberCount);
        },
      });
    }
    if (outputs) {
      new client.Counter({
        name: 'caption_runs_output_failures_total',
        help: 'Posts that failed, by target (caption-qa embeddings, alert-dispatch alerts)',
        labelNames: ['target'],
        registers,
        collect() {
          this.reset();
          this.inc({ target: 'caption-qa' }, outputs.embeddingFailures);
          this.inc({ target: 'alert-dispatch' }, outputs.alertFailures);
        },
      });
    }
  }

  private run(runId: string): RunTotals {
    let totals = this.totals.get(runId);
    if (!totals) this.totals.set(runId, (totals = zero()));
    return totals;
  }

  /** The worker published a caption. */
  caption(event: CaptionEvent): void {
    const totals = this.run(event.runId);
    const labels = { run_id: event.runId };
    if (event.framesIn > totals.frames) this.frames.inc(labels, event.framesIn - totals.frames);
    if (event.droppedFrames > totals.dropped) this.dropped.inc(labels, event.droppedFrames - totals.dropped);
    totals.frames = Math.max(totals.frames, event.framesIn);
    totals.dropped = Math.max(totals.dropped, event.droppedFrames);
    totals.captions++;
    totals.latencySum += event.latencyMs;
    totals.latencyCount++;
    this.captions.inc(labels);
    this.latency.observe(labels, event.latencyMs / 1000);
  }

  /** The worker opened a run's stream again. */
  reconnect(runId: string): void {
    this.run(runId).reconnects++;
    this.reconnects.inc({ run_id: runId });
  }

  /** Every run's figures since the previous snapshot (rates over that interval), and a new interval begins. */
  snapshot(): MetricPoint[] {
    const now = this.clock();
    const seconds = Math.max(0.001, (now - this.lastSnapshotAt) / 1000);
    this.lastSnapshotAt = now;
    const points: MetricPoint[] = [];
    for (const [runId, totals] of this.totals) {
      const before = this.atLastSnapshot.get(runId) ?? zero();
      const latencyCount = totals.latencyCount - before.latencyCount;
      points.push({
        name: 'caption_run',
        tags: { run_id: runId },
        fields: {
          frames_per_second: (totals.frames - before.frames) / seconds,
          captions_per_second: (totals.captions - before.captions) / seconds,
          caption_latency_ms: latencyCount > 0 ? (totals.latencySum - before.latencySum) / latencyCount : null,
          dropped_frames: totals.dropped,
          reconnects: totals.reconnects,
        },
        timestamp: now,
      });
      this.atLastSnapshot.set(runId, { ...totals });
    }
    return points;
  }
}
