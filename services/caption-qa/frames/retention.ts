import type { Logger } from '../../lib/log/index.js';
import type { VectorStore } from '../../lib/vectors/index.js';
import type { Clock } from '../question/parse-question.js';
import type { SourceRegistry } from '../sources/known-sources.js';
import type { KeepLimits, KeptFrames } from './kept-frames.js';

/** Frame keys per vector delete: bounds the filter's size. */
const DELETE_CHUNK = 100;

/** What a sweep works on. */
export interface RetentionDeps {
  keptFrames: KeptFrames;
  frames: VectorStore;
  sources: SourceRegistry;
  limits: KeepLimits;
  logger: Logger;
  clock: Clock;
}

/**
 * Applies frame retention now and then: deletes the frames past the count or age limit, with their image vectors,
 * and reloads the source registry (names other replicas learnt). A failed sweep is logged and tried again next time.
 */
export class RetentionSweeper {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(private readonly deps: RetentionDeps) {}

  /** Sweeps every `intervalMs` until stopped; the timer does not keep the process alive. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a sweep under way. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One sweep (never two at once); resolves with the number of frames deleted. */
  sweep(): Promise<number> {
    this.running ??= this.sweepOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweepOnce(): Promise<number> {
    const { keptFrames, frames, limits, logger } = this.deps;
    try {
      const keys = await keptFrames.sweep(limits, this.deps.clock());
      for (let i = 0; i < keys.length; i += DELETE_CHUNK) {
        await frames.delete({ in: { frame_key: keys.slice(i, i + DELETE_CHUNK) } });
      }
      await this.deps.sources.load();
      if (keys.length > 0) logger.info('frames removed by retention', { count: keys.length });
      return keys.length;
    } catch (error) {
      logger.warn('frame retention sweep failed', { error: (error as Error).message });
      throw error;
    }
  }
}
