import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SharedState } from '../../lib/shared-state/index.js';

/** One processing request's telemetry, in the contract's shape. */
export interface TelemetryRecord {
  request_id: string;
  source: string;
  timestamps: { requested_at: string; completed_at: string; wall_time_seconds: number };
  video: {
    bucket_name: string;
    video_id: string;
    filename: string;
    frame_interval: number;
    fps: number;
    total_frames: number;
    video_duration_seconds: number;
    tags: string[];
  };
  config: { object_detection_enabled: boolean; detection_confidence: number };
  counts: { stream_id: number; frames_extracted: number; items_after_detection: number; embeddings_stored: number };
  pipeline_stats: Record<string, unknown>;
  stage_duration: Record<string, number>;
  stage_throughput: Record<string, number>;
  /** Per embedder call, bounded by the pipeline (MAX_BATCH_ENTRIES). */
  batches: unknown[];
}

/** Options of the telemetry log; `file` persists the records (JSON lines) so a restart keeps them. */
export interface TelemetryLogOptions {
  maxRecords: number;
  file?: string;
  /**
   * State every replica shares (Redis): records are also kept there, bounded, so GET /telemetry on any replica (and
   * the ingest workers' records, in the cluster) reads them all. Unreachable, each replica answers its own records.
   */
  shared?: SharedState;
  /** Told when the shared state becomes unreachable (with why) and when it answers again: once per outage. */
  onSharedAvailability?: (available: boolean, error?: unknown) => void;
}

/** The shared list of records, newest first. */
const SHARED_KEY = 'telemetry';

/** The file is compacted to the newest `maxRecords` lines once it holds this many times as many. */
const COMPACT_FACTOR = 2;

function isTelemetryRecord(value: unknown): value is TelemetryRecord {
  return typeof value === 'object' && value !== null && typeof (value as TelemetryRecord).request_id === 'string';
}

/**
 * The most recent telemetry records, newest first, bounded by `maxRecords`. With a file, each record is appended as
 * one JSON line (one write at a time, never a rewrite per request); when the file holds COMPACT_FACTOR × maxRecords
 * lines it is rewritten with the newest maxRecords (temp file + rename), so it stays bounded at a cost of one
 * rewrite per maxRecords requests. Reading it back skips lines that do not parse — a line torn by a crash mid-append
 * included — and a file that ends in one is compacted at once, so the next append starts on a line of its own.
 */
export class TelemetryLog {
  private records: TelemetryRecord[] = [];
  /** Lines the file holds once every queued write is done. */
  private fileLines = 0;
  private writing: Promise<void> = Promise.resolve();
  private sharedAvailable = true;

  private constructor(private readonly options: TelemetryLogOptions) {}

  /** Opens the log, loading persisted records when a file is configured; a missing file starts an empty log. */
  static async open(options: TelemetryLogOptions): Promise<TelemetryLog> {
    const log = new TelemetryLog(options);
    if (options.file) await log.load(options.file);
    return log;
  }

  /** Adds a record at the front, dropping the oldest beyond the bound, and appends it to the file (and shared list). */
  add(record: TelemetryRecord): void {
    this.records.unshift(record);
    if (this.records.length > this.options.maxRecords) this.records.length = this.options.maxRecords;
    const { shared, maxRecords } = this.options;
    if (shared) {
      const written = shared.pushRecent(SHARED_KEY, JSON.stringify(record), maxRecords);
      this.writing = this.writing.then(() =>
        written.then(
          () => this.sharedAnswered(),
          (error) => this.sharedFailed(error),
        ),
      );
    }
    const file = this.options.file;
    if (!file) return;
    if (++this.fileLines >= COMPACT_FACTOR * this.options.maxRecords) return this.compact(file);
    const line = `${JSON.stringify(record)}\n`;
    this.enqueue(async () => {
      await mkdir(path.dirname(file), { recursive: true });
      await appendFile(file, line);
    });
  }

  /**
   * Up to `limit` records, newest first: every replica's from the shared state when there is one, else (or while it
   * cannot be reached: telemetry fails open) this process's own.
   */
  async list(limit: number): Promise<TelemetryRecord[]> {
    const { shared } = this.options;
    if (shared) {
      try {
        const lines = await shared.recent(SHARED_KEY, limit);
        this.sharedAnswered();
        return lines.flatMap((line) => {
          try {
            const value: unknown = JSON.parse(line);
            return isTelemetryRecord(value) ? [value] : [];
          } catch {
            return [];
          }
        });
      } catch (error) {
        this.sharedFailed(error);
      }
    }
    return this.records.slice(0, limit);
  }

  private sharedAnswered(): void {
    if (this.sharedAvailable) return;
    this.sharedAvailable = true;
    this.options.onSharedAvailability?.(true);
  }

  private sharedFailed(error: unknown): void {
    if (!this.sharedAvailable) return;
    this.sharedAvailable = false;
    this.options.onSharedAvailability?.(false, error);
  }

  /** Resolves when every pending write has finished. */
  flush(): Promise<void> {
    return this.writing;
  }

  private async load(file: string): Promise<void> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return; // no history yet (or unreadable): start empty
    }
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    const stored: TelemetryRecord[] = [];
    for (const line of lines) {
      try {
        const value: unknown = JSON.parse(line);
        if (isTelemetryRecord(value)) stored.push(value);
      } catch {
        // a line torn by a crash mid-write, or damaged: skipped
      }
    }
    this.records = stored.slice(-this.options.maxRecords).reverse();
    this.fileLines = stored.length;
    const damaged = stored.length < lines.length || (text !== '' && !text.endsWith('\n'));
    if (damaged || this.fileLines >= COMPACT_FACTOR * this.options.maxRecords) this.compact(file);
    await this.writing;
  }

  /**
   * Queues a rewrite of the file with the records held now, oldest first. The snapshot is taken here, in line with
   * the appends queued before and after it, so no record is lost or written twice.
   */
  private compact(file: string): void {
    const kept = [...this.records].reverse();
    this.fileLines = kept.length;
    this.enqueue(async () => {
      const temp = `${file}.${process.pid}.tmp`;
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(temp, kept.map((record) => `${JSON.stringify(record)}\n`).join(''));
      await rename(temp, file);
    });
  }

  private enqueue(write: () => Promise<void>): void {
    this.writing = this.writing.then(write).catch(() => {
      // telemetry is best effort: a failed write never fails a request
    });
  }
}
