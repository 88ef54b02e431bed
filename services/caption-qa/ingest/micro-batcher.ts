interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Groups concurrent calls into batches: an item submitted while idle runs at once, alone; items submitted while a
 * batch runs wait and go together in the next one (at most `maxBatch`). One batch at a time, so a burst costs a few
 * model runs or table writes instead of one per item, and a lone request waits for nothing.
 */
export class MicroBatcher<I, O> {
  private queue: Array<Pending<I, O>> = [];
  private running = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxBatch: number,
  ) {}

  /** Resolves with this item's result, or rejects with its batch's failure. */
  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const results = await this.run(batch.map((p) => p.item));
        batch.forEach((p, i) => p.resolve(results[i]));
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.running = false;
  }
}
