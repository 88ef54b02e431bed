import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

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
  batches: unknown[];
}

/** Options of the telemetry log; `file` persists the records so a restart keeps them. */
export interface TelemetryLogOptions {
  maxRecords: number;
  file?: string;
}

/**
 * The most recent telemetry records, newest first, bounded by `maxRecords`. With a file, every change is written
 * (atomically, one write at a time) as a JSON array; a missing or unreadable file starts an empty log.
 */
export class TelemetryLog {
  private records: TelemetryRecord[] = [];
  private writing: Promise<void> = Promise.resolve();

  private constructor(private readonly options: TelemetryLogOptions) {}

  /** Opens the log, loading persisted records when a file is configured. */
  static async open(options: TelemetryLogOptions): Promise<TelemetryLog> {
    const log = new TelemetryLog(options);
    if (options.file) {
      try {
        const stored = JSON.parse(await readFile(options.file, 'utf8'));
        if (Array.isArray(stored)) log.records = stored.slice(0, options.maxRecords);
      } catch {
        // no usable history: start empty
      }
    }
    return log;
  }

  /** Adds a record at the front, dropping the oldest beyond the bound. */
  add(record: TelemetryRecord): void {
    this.records.unshift(record);
    if (this.records.length > this.options.maxRecords) this.records.length = this.options.maxRecords;
    this.persist();
  }

  /** Up to `limit` records, newest first. */
  list(limit: number): TelemetryRecord[] {
    return this.records.slice(0, limit);
  }

  /** Resolves when every pending write has finished. */
  flush(): Promise<void> {
    return this.writing;
  }

  private persist(): void {
    const file = this.options.file;
    if (!file) return;
    this.writing = this.writing.then(async () => {
      try {
        await mkdir(path.dirname(file), { recursive: true });
        const temp = `${file}.${process.pid}.tmp`;
        await writeFile(temp, JSON.stringify(this.records));
        await rename(temp, file);
      } catch {
        // telemetry is best effort: a failed write never fails a request
      }
    });
  }
}
