import type { RelayTimers } from '../relay/metadata-relay.js';

/** Timers a test fires by hand: the relay's idle status without waiting for wall time. */
export class ManualTimers implements RelayTimers {
  private readonly pending = new Map<number, () => void>();
  private nextId = 0;

  set(callback: () => void): number {
    const id = ++this.nextId;
    this.pending.set(id, callback);
    return id;
  }

  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** How many timers are armed. */
  get armed(): number {
    return this.pending.size;
  }

  /** Fires every armed timer (each once). */
  fireAll(): void {
    const callbacks = [...this.pending.values()];
    this.pending.clear();
    for (const callback of callbacks) callback();
  }
}
