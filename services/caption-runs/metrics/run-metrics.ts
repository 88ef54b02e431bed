import client from 'prom-client';
import type { RelayCounters } from '../relay/metadata-relay.js';
import type { RunReport } from './run-report.js';

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

/** What the service has counted of one run, across its workers' sessions. */
interface RunTotals {
  frames: number;
  captions: number;
  dropped: number;
  reconnects: number;
  latencySum: number;
  latencyCount: number;
}

/** One run as the reports tell it: the totals, the last report of the current session, whether it ended. */
interface RunState {
  totals: RunTotals;
  session: string;
  /** Sessions that came before it (a few): a late report of one of them counts nothing. */
  earlier: string[];
  last: RunReport | undefined;
  ended: boolean;
}

/** Earlier sessions remembered per run. */
const EARLIER_SESSIONS = 8;

/** Most runs followed at once: reports for more (from whoever can publish on the broker) evict the stalest. */
const MAX_RUNS = 1000;

const zero = (): RunTotals => ({ frames: 0, captions: 0, dropped: 0, reconnects: 0, latencySum: 0, latencyCount: 0 });

/** How far a session's count moved since its previous report (counts never go back within a session). */
const moved = (next: number, previous: number | undefined) => Math.max(0, next - (previous ?? 0));

/**
 * Per-run metrics of every caption run, built from the reports the workers publish on MQTT
 * (`live-video-captioning/{runId}/metrics`), so that they are the same whether a run's worker runs in this process or
 * in a pod of its own, and on every replica of the service: Prometheus counters and a latency histogram on the
 * service's registry (label `run_id`), and interval snapshots for the WebSocket frames. A run's series go once it
 * ended (after the next snapshot).
 */
export class RunMetrics {
  private readonly runs = new Map<string, RunState>();
  private readonly atLastSnapshot = new Map<string, RunTotals>();
  private lastSnapshotAt: number;
  private readonly outputFailures = { 'caption-qa': 0, 'alert-dispatch': 0 };
  private readonly frames: client.Counter<'run_id'>;
  private readonly captions: client.Counter<'run_id'>;
  private readonly dropped: client.Counter<'run_id'>;
  private readonly reconnects: client.Counter<'run_id'>;
  private readonly latency: client.Histogram<'run_id'>;

  constructor(
    registry: client.Registry,
    private readonly clock: () => number,
    relay?: { counters: RelayCounters; subscriberCount: number },
  ) {
    this.lastSnapshotAt = clock();
    const registers = [registry];
    const perRun = (name: string, help: string) =>
      new client.Counter({ name, help, labelNames: ['run_id'], registers });
    this.frames = perRun('caption_runs_frames_total', 'Frames read from the stream and sampled, per run');
    this.captions = perRun('caption_runs_captions_total', 'Captions published, per run');
    this.dropped = perRun(
      'caption_runs_dropped_frames_total',
      'Frames dropped because captioning was slower than the stream, per run',
    );
    this.reconnects = perRun('caption_runs_reconnects_total', 'Times a run opened its stream again, per run');
    this.latency = new client.Histogram({
      name: 'caption_runs_caption_latency_seconds',
      help: 'Frame read to caption published, per run',
      labelNames: ['run_id'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    });
    const failures = this.outputFailures;
    new client.Counter({
      name: 'caption_runs_output_failures_total',
      help: 'Posts that failed, by target (caption-qa embeddings, alert-dispatch alerts)',
      labelNames: ['target'],
      registers,
      collect() {
        this.reset();
        for (const [target, count] of Object.entries(failures)) this.inc({ target }, count);
      },
    });
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
  }

  /** How many runs are followed. */
  get runCount(): number {
    return this.runs.size;
  }

  /** One report of a run's worker: what moved since its session's previous report is counted. */
  record(runId: string, report: RunReport): void {
    let state = this.runs.get(runId);
    if (state?.earlier.includes(report.session)) return;
    if (state)
      this.runs.delete(runId); // re-inserted below: the map's order is least recently reported first
    else {
      if (this.runs.size >= MAX_RUNS) this.forget(this.runs.keys().next().value!);
      state = { totals: zero(), session: report.session, earlier: [], last: undefined, ended: false };
    }
    this.runs.set(runId, state);
    if (state.session !== report.session) {
      state.earlier = [state.session, ...state.earlier].slice(0, EARLIER_SESSIONS);
      [state.session, state.last] = [report.session, undefined];
    }
    const last = state.last;
    const labels = { run_id: runId };
    const frames = moved(report.frames, last?.frames);
    const captions = moved(report.captions, last?.captions);
    const dropped = moved(report.dropped_frames, last?.dropped_frames);
    const reconnects = moved(report.reconnects, last?.reconnects);
    this.outputFailures['caption-qa'] += moved(report.caption_qa.failed, last?.caption_qa.failed);
    this.outputFailures['alert-dispatch'] += moved(report.alerts.failed, last?.alerts.failed);
    const totals = state.totals;
    totals.frames += frames;
    totals.captions += captions;
    totals.dropped += dropped;
    totals.reconnects += reconnects;
    if (frames > 0) this.frames.inc(labels, frames);
    if (captions > 0) this.captions.inc(labels, captions);
    if (dropped > 0) this.dropped.inc(labels, dropped);
    if (reconnects > 0) this.reconnects.inc(labels, reconnects);
    if (report.event === 'caption' && report.latency_ms !== undefined) {
      totals.latencySum += report.latency_ms;
      totals.latencyCount++;
      this.latency.observe(labels, report.latency_ms / 1000);
    }
    state.last = report;
    state.ended = report.event === 'ended';
  }

  private forget(runId: string): void {
    this.runs.delete(runId);
    this.atLastSnapshot.delete(runId);
    const labels = { run_id: runId };
    for (const metric of [this.frames, this.captions, this.dropped, this.reconnects, this.latency]) {
      metric.remove(labels);
    }
  }

  /**
   * Every run's figures since the previous snapshot (rates over that interval), and a new interval begins. A run
   * that ended is in it once more, then forgotten.
   */
  snapshot(): MetricPoint[] {
    const now = this.clock();
    const seconds = Math.max(0.001, (now - this.lastSnapshotAt) / 1000);
    this.lastSnapshotAt = now;
    const points: MetricPoint[] = [];
    for (const [runId, { totals, ended }] of [...this.runs]) {
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
      if (ended) this.forget(runId);
      else this.atLastSnapshot.set(runId, { ...totals });
    }
    return points;
  }
}
