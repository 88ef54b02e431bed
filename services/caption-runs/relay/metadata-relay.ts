import { RUN_ID_PATTERN } from '../runs/run-ids.js';

/** The contract's stream envelope: one caption of one run. */
export interface RelayEnvelope {
  runId: string;
  /** The message's metadata (the pipeline's inference result). */
  data: Record<string, unknown>;
  /** Seconds since the epoch, fractional: when the relay received it. */
  received_at: number;
}

/** Timers the relay's idle status uses (injected in tests: no test waits for wall time). */
export interface RelayTimers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** The process's timers. */
export const SYSTEM_TIMERS: RelayTimers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What a subscriber is sent, already serialised (one `data:` line each). */
export type RelayItem = { kind: 'message'; json: string } | { kind: 'status' } | { kind: 'missed'; count: number };

/** Counts the relay keeps (for /metrics). */
export interface RelayCounters {
  received: number;
  ignored: number;
  missed: number;
}

/**
 * One subscriber of the relay: a bounded buffer of what it has not taken yet. When it is full the oldest message is
 * dropped and counted, so a slow reader never slows the relay nor the other subscribers; `missed` reaches the reader
 * as its own item before the next message. After `idleMs` without a message a status item is due (again every
 * `idleMs` while it stays idle).
 */
export class RelaySubscriber {
  private readonly buffer: string[] = [];
  private missed = 0;
  private statusDue = false;
  private timer: unknown;
  private waiter: (() => void) | undefined;
  closed = false;

  constructor(
    private readonly relay: MetadataRelay,
    private readonly capacity: number,
    private readonly idleMs: number,
    private readonly timers: RelayTimers,
  ) {
    this.arm();
  }

  private arm(): void {
    this.timers.clear(this.timer);
    this.timer = this.timers.set(() => {
      this.statusDue = true;
      this.wake();
    }, this.idleMs);
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  /** Called by the relay with one serialised envelope. */
  offer(json: string): void {
    if (this.closed) return;
    this.buffer.push(json);
    if (this.buffer.length > this.capacity) {
      this.buffer.shift();
      this.missed++;
      this.relay.counters.missed++;
    }
    this.statusDue = false;
    this.arm();
    this.wake();
  }

  /** The next item to send; undefined once closed. Missed messages are reported before the message after them. */
  async next(): Promise<RelayItem | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      if (this.missed > 0) {
        const count = this.missed;
        this.missed = 0;
        return { kind: 'missed', count };
      }
      const json = this.buffer.shift();
      if (json !== undefined) return { kind: 'message', json };
      if (this.statusDue) {
        this.statusDue = false;
        this.arm();
        return { kind: 'status' };
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  /** Leaves the relay. */
  close(): void {
    this.closed = true;
    this.timers.clear(this.timer);
    this.relay.unsubscribe(this);
    this.wake();
  }
}

/** Where caption messages arrive: `live-video-captioning/{runId}`. */
export const RELAY_TOPIC_FILTER = 'live-video-captioning/+';
const TOPIC_PREFIX = 'live-video-captioning/';

/**
 * Fans every caption message received on `live-video-captioning/+` out to the SSE subscribers as the contract's
 * envelope `{runId, data, received_at}` (runId from the topic, data the message's metadata). A message without a
 * caption (no `metadata.result` string) or that is not JSON is ignored and counted. Each envelope is serialised once,
 * whatever the number of subscribers.
 */
export class MetadataRelay {
  private readonly subscribers = new Set<RelaySubscriber>();
  readonly counters: RelayCounters = { received: 0, ignored: 0, missed: 0 };

  constructor(
    private readonly options: {
      /** Messages a subscriber may have pending before the oldest is dropped. */
      bufferMessages: number;
      /** Quiet time before a status message, milliseconds (the original's 1 s). */
      idleMs: number;
      timers?: RelayTimers;
      clock?: () => number;
    },
  ) {}

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  subscribe(): RelaySubscriber {
    const subscriber = new RelaySubscriber(
      this,
      this.options.bufferMessages,
      this.options.idleMs,
      this.options.timers ?? SYSTEM_TIMERS,
    );
    this.subscribers.add(subscriber);
    return subscriber;
  }

  unsubscribe(subscriber: RelaySubscriber): void {
    this.subscribers.delete(subscriber);
  }

  /** One MQTT message: relayed when its topic names a run and it carries a caption. */
  receive(topic: string, payload: Buffer | string): void {
    const runId = topic.startsWith(TOPIC_PREFIX) ? topic.slice(TOPIC_PREFIX.length) : '';
    let data: unknown;
    try {
      data = (JSON.parse(payload.toString()) as { metadata?: unknown })?.metadata;
    } catch {
      data = undefined;
    }
    const caption = (data as { result?: unknown } | undefined)?.result;
    if (!RUN_ID_PATTERN.test(runId) || typeof data !== 'object' || data === null || typeof caption !== 'string') {
      this.counters.ignored++;
      return;
    }
    this.counters.received++;
    const envelope: RelayEnvelope = {
      runId,
      data: data as Record<string, unknown>,
      received_at: (this.options.clock ?? Date.now)() / 1000,
    };
    const json = JSON.stringify(envelope);
    for (const subscriber of this.subscribers) subscriber.offer(json);
  }

  /** Ends every subscription (the service is stopping). */
  close(): void {
    for (const subscriber of [...this.subscribers]) subscriber.close();
  }
}
