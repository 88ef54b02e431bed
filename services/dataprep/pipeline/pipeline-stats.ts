import { performance } from 'node:perf_hooks';

/** One embedder call (telemetry `batches[]`). */
export interface EmbedBatchStats {
  index: number;
  /** Images embedded in this call (frames + crops). */
  items: number;
  crops: number;
  first_frame_id: number;
  last_frame_id: number;
  /** Seconds from the pipeline start when the call began. */
  started_at_s: number;
  embed_s: number;
}

/**
 * Seconds each stage was busy (telemetry `stage_duration`). Stages overlap, so they may add up to more than wall_s.
 * decode_s: waiting for the next decoded frame (ffmpeg + pipe) or decoding the image; detect_s: detector calls;
 * embed_s: embedder calls; write_s: vector-store inserts; wall_s: probe to last insert. Model calls count their
 * preprocessing and decoding but not the time spent waiting for another model's run to finish.
 */
export interface StageDurations {
  decode_s: number;
  detect_s: number;
  embed_s: number;
  write_s: number;
  wall_s: number;
}

/** Rates (telemetry `stage_throughput`): whole-pipeline rates over wall time, stage rates over that stage's busy time. */
export interface StageThroughput {
  frames_per_s: number;
  embeddings_per_s: number;
  decode_frames_per_s: number;
  detect_frames_per_s: number;
  embed_items_per_s: number;
  write_records_per_s: number;
}

/** Shape of the run (telemetry `pipeline_stats`). */
export interface PipelineStats {
  frames_extracted: number;
  crops_detected: number;
  items_after_detection: number;
  embeddings_stored: number;
  embed_batch_size: number;
  write_batch_size: number;
  /** Embedder calls made; `batches` lists at most MAX_BATCH_ENTRIES of them. */
  embed_batches: number;
  write_batches: number;
  /** Most items each queue held at once: a full queue sits in front of the slowest stage. */
  peak_queue: { frames: number; items: number; records: number };
  /** detect_s + embed_s: time in model calls. */
  model_s: number;
  /** Seconds a model run held the model slot (the session run itself, hand-off to its worker thread included). */
  model_run_s: number;
  /** wall_s − model_run_s: time no model ran, what the pipeline loses against the models' own limit. */
  model_idle_s: number;
  /** Sum of stage busy times / wall time: above 1 means stages really overlapped. */
  overlap: number;
}

/** What embedMedia returns; the dataprep telemetry record is built from it. */
export interface EmbedMediaResult {
  embeddingsStored: number;
  framesExtracted: number;
  cropsDetected: number;
  /** Frames (or the image) plus kept crops: everything that was embedded. */
  itemsAfterDetection: number;
  video: { fps: number; totalFrames: number; durationSeconds: number };
  stages: StageDurations;
  throughput: StageThroughput;
  pipelineStats: PipelineStats;
  /** The first and the last embedder calls, at most MAX_BATCH_ENTRIES together (`index` shows any gap). */
  batches: EmbedBatchStats[];
}

/** Most `batches` entries one result keeps, so a telemetry record stays small however long the video is. */
export const MAX_BATCH_ENTRIES = 64;

/** Per-call stats of one run: keeps the first and the last MAX_BATCH_ENTRIES / 2 calls and counts them all. */
export class BatchLog {
  private readonly head: EmbedBatchStats[] = [];
  private readonly tail: EmbedBatchStats[] = [];
  /** Calls recorded, kept or not. */
  total = 0;

  /** Records one embedder call. */
  add(entry: EmbedBatchStats): void {
    this.total++;
    const half = MAX_BATCH_ENTRIES / 2;
    if (this.head.length < half) this.head.push(entry);
    else if (this.tail.push(entry) > half) this.tail.shift();
  }

  /** The kept entries, in call order. */
  entries(): EmbedBatchStats[] {
    return [...this.head, ...this.tail];
  }
}

type Stage = 'decode' | 'detect' | 'embed' | 'write';

/** `value` to three decimals: the precision of every seconds figure in telemetry. */
export const round3 = (value: number) => Math.round(value * 1000) / 1000;
const rate = (count: number, seconds: number) => (seconds > 0 ? round3(count / seconds) : 0);

/** Accumulates per-stage busy time for one pipeline run. */
export class PipelineClock {
  private readonly start = performance.now();
  private readonly busy: Record<Stage, number> = { decode: 0, detect: 0, embed: 0, write: 0 };
  private modelRun = 0;
  private readonly counters = new Map<string, number>();

  /** Seconds since the run started. */
  elapsed(): number {
    return (performance.now() - this.start) / 1000;
  }

  /** Runs `work`, adding its duration to `stage`'s busy time. */
  async time<T>(stage: Stage, work: () => Promise<T>): Promise<T> {
    const began = performance.now();
    try {
      return await work();
    } finally {
      this.busy[stage] += (performance.now() - began) / 1000;
    }
  }

  /** Takes `seconds` spent waiting (for the model slot) off `stage`'s busy time, which `time` counted in. */
  excludeWait(stage: Stage, seconds: number): void {
    this.busy[stage] -= seconds;
  }

  /** Runs one model run, adding its duration to the time the model slot was held. */
  async timeModelRun<T>(run: () => Promise<T>): Promise<T> {
    const began = performance.now();
    try {
      return await run();
    } finally {
      this.modelRun += (performance.now() - began) / 1000;
    }
  }

  count(name: string): void {
    this.counters.set(name, (this.counters.get(name) ?? 0) + 1);
  }

  /** Freezes the run's figures into the result. */
  result(run: {
    video: EmbedMediaResult['video'];
    framesExtracted: number;
    cropsDetected: number;
    itemsAfterDetection: number;
    embeddingsStored: number;
    embedBatchSize: number;
    writeBatchSize: number;
    peakQueue: PipelineStats['peak_queue'];
    batches: BatchLog;
  }): EmbedMediaResult {
    const wall = this.elapsed();
    const { decode, detect, embed, write } = this.busy;
    return {
      embeddingsStored: run.embeddingsStored,
      framesExtracted: run.framesExtracted,
      cropsDetected: run.cropsDetected,
      itemsAfterDetection: run.itemsAfterDetection,
      video: run.video,
      stages: {
        decode_s: round3(decode),
        detect_s: round3(detect),
        embed_s: round3(embed),
        write_s: round3(write),
        wall_s: round3(wall),
      },
      throughput: {
        frames_per_s: rate(run.framesExtracted, wall),
        embeddings_per_s: rate(run.embeddingsStored, wall),
        decode_frames_per_s: rate(run.framesExtracted, decode),
        detect_frames_per_s: rate(run.framesExtracted, detect),
        embed_items_per_s: rate(run.itemsAfterDetection, embed),
        write_records_per_s: rate(run.embeddingsStored, write),
      },
      pipelineStats: {
        frames_extracted: run.framesExtracted,
        crops_detected: run.cropsDetected,
        items_after_detection: run.itemsAfterDetection,
        embeddings_stored: run.embeddingsStored,
        embed_batch_size: run.embedBatchSize,
        write_batch_size: run.writeBatchSize,
        embed_batches: run.batches.total,
        write_batches: this.counters.get('writes') ?? 0,
        peak_queue: run.peakQueue,
        model_s: round3(detect + embed),
        model_run_s: round3(this.modelRun),
        model_idle_s: round3(Math.max(0, wall - this.modelRun)),
        overlap: wall > 0 ? round3((decode + detect + embed + write) / wall) : 0,
      },
      batches: run.batches.entries(),
    };
  }
}
