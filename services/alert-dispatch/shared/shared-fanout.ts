import {
  compareBroadcastIds,
  SharedStateUnavailableError,
  type BroadcastEntry,
  type SharedState,
} from '../../lib/shared-state/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { EventPublisher } from '../dispatch/dispatcher.js';
import type { NumberedEvent } from '../streams/event-hub.js';
import type { OutageLog } from './outage-log.js';

/** Where a replica hands the events it receives from the broadcast: its own EventHub. */
export interface NumberedEventSink {
  deliverNumbered(numbered: NumberedEvent): void;
  publish(event: string, data: unknown): void;
}

/** Collaborators and bounds of a SharedFanout. */
export interface SharedFanoutOptions {
  state: SharedState;
  hub: NumberedEventSink;
  outage: OutageLog;
  logger: Logger;
  /** Events kept for subscribers that reconnect with Last-Event-ID. */
  keep: number;
}

/** The broadcast channel of the dispatch events. */
const EVENTS_CHANNEL = 'events';

/** `<event>\n<json>`: the event name never holds a line break, so the first one splits the two. */
function toItem(event: string, json: string): string {
  return `${event}\n${json}`;
}

function fromEntry({ id, item }: BroadcastEntry): NumberedEvent {
  const newline = item.indexOf('\n');
  return { id, event: item.slice(0, newline), json: item.slice(newline + 1) };
}

/**
 * Fan-out across replicas on the shared state's broadcast (Redis pub/sub): every dispatch event is published once by
 * the replica that dispatched it, numbered and kept in one step, and every replica (this one included) delivers what
 * it receives to its own subscribers — so all replicas see one order, and an SSE client can resume on any replica
 * from the kept events. Shared state unreachable: the event goes to this replica's subscribers only, without an id
 * (not replayable), and the outage is logged once.
 */
export class SharedFanout implements EventPublisher {
  private unsubscribe?: () => Promise<void>;
  /** The last id handed to the hub: nothing at or before it is handed again. */
  private lastId?: string;
  /** While the backlog is read after a lost connection: the entries received meanwhile. */
  private held?: BroadcastEntry[];

  constructor(private readonly options: SharedFanoutOptions) {}

  /** Starts receiving the broadcast; before the first publish. */
  async start(): Promise<void> {
    this.unsubscribe = await this.options.state.subscribe(
      EVENTS_CHANNEL,
      (entry) => (this.held ? this.held.push(entry) : this.hand(entry)),
      () => void this.catchUp(),
    );
  }

  /** Hands `entry` to the hub unless it was handed already (live and from the backlog both). */
  private hand(entry: BroadcastEntry): void {
    if (this.lastId !== undefined && compareBroadcastIds(entry.id, this.lastId) <= 0) return;
    this.lastId = entry.id;
    this.options.hub.deliverNumbered(fromEntry(entry));
  }

  /**
   * After a lost connection: hands the hub what was broadcast meanwhile (from the backlog), then what arrived while
   * it was read, in id order, so this replica's subscribers miss nothing the backlog still holds.
   */
  private async catchUp(): Promise<void> {
    if (this.held) return;
    this.held = [];
    try {
      for (const entry of await this.options.state.backlog(EVENTS_CHANNEL, this.lastId)) this.hand(entry);
    } catch (error) {
      if (error instanceof SharedStateUnavailableError) this.options.outage.failed('streams', error);
      else throw error;
    } finally {
      const held = this.held;
      this.held = undefined;
      for (const entry of held) this.hand(entry);
    }
  }

  /** Stops receiving the broadcast. */
  async close(): Promise<void> {
    await this.unsubscribe?.().catch(() => undefined);
  }

  publish(event: string, data: unknown): void {
    const { state, outage, hub, logger } = this.options;
    let json: string;
    try {
      json = JSON.stringify(data ?? null);
    } catch (err) {
      // The hub words the `error` event of an unserialisable one, on this replica.
      hub.publish(event, data);
      logger.debug('event not broadcast: unserialisable', { event, error: (err as Error).message });
      return;
    }
    state.broadcast(EVENTS_CHANNEL, toItem(event, json), this.options.keep).then(
      () => outage.succeeded(),
      (error: unknown) => {
        if (error instanceof SharedStateUnavailableError) outage.failed('streams', error);
        else logger.error('broadcasting an event failed', { event, error: String(error) });
        hub.publish(event, data);
      },
    );
  }

  /** The kept events after `afterId`, oldest first: what a reconnecting subscriber missed. */
  async replay(afterId: string): Promise<NumberedEvent[]> {
    return (await this.options.state.backlog(EVENTS_CHANNEL, afterId)).map(fromEntry);
  }
}
