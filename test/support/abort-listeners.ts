import { getEventListeners } from 'node:events';

/** What a watched signal went through: its abort listeners now, at most at once, and whether Node warned. */
export interface AbortListenerWatch {
  /** Abort listeners when the watch began. */
  readonly baseline: number;
  /** Abort listeners now. */
  current(): number;
  /** The most abort listeners the signal carried at once since the watch began. */
  readonly peak: number;
  /** Whether Node emitted MaxListenersExceededWarning for this signal (ever, not only since the watch began). */
  warned(): boolean;
  /** Ends the watch (the signal's own addEventListener is used again). */
  stop(): void;
}

/**
 * Watches the abort listeners of a long-lived `signal`: the count after every addition (Node's own callers included:
 * child_process, undici and timers add theirs through the same method) and the flag Node sets on an EventTarget
 * when it emits MaxListenersExceededWarning for it. The flag, not a process 'warning' listener: jest gives each test
 * file its own copy of `process`, so warnings the runtime emits never reach a listener a test adds.
 */
export function watchAbortListeners(signal: AbortSignal): AbortListenerWatch {
  const count = () => getEventListeners(signal, 'abort').length;
  const warnedFlag = Object.getOwnPropertySymbols(signal).find(
    (symbol) => symbol.description === 'events.maxEventTargetListenersWarned',
  );
  if (!warnedFlag) throw new Error('this Node.js keeps no MaxListenersExceededWarning flag on an AbortSignal');
  const add = signal.addEventListener;
  const watch = {
    baseline: count(),
    peak: count(),
    current: count,
    warned: () => (signal as unknown as Record<symbol, unknown>)[warnedFlag] === true,
    stop: () => void delete (signal as { addEventListener?: unknown }).addEventListener,
  };
  signal.addEventListener = function (this: AbortSignal, ...args: Parameters<AbortSignal['addEventListener']>) {
    add.apply(this, args);
    watch.peak = Math.max(watch.peak, count());
  } as AbortSignal['addEventListener'];
  return watch;
}
