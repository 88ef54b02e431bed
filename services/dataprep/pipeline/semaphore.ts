/**
 * Limits how many async tasks run at once. The pipeline runs model calls through one: on a CPU each onnxruntime
 * session already uses every core, so two sessions at once only fight over cores (and spin), making both slower.
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly permits: number) {
    if (!Number.isSafeInteger(permits) || permits < 1) throw new RangeError('permits must be a positive integer');
  }

  /** Runs `task` once a permit is free, releasing it when the task settles. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.permits) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // Hand the permit straight to the next waiter so a newcomer cannot overtake it.
      if (next) next();
      else this.active--;
    }
  }
}
