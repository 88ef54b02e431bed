import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Logger } from '../../lib/log/index.js';
import { openSharedState, type SharedState } from '../../lib/shared-state/index.js';
import type { AlertDispatchConfig } from '../config.js';
import type { Clock } from '../dispatch/clock.js';
import { DedupStore, type DedupGate } from '../dispatch/dedup.js';
import type { EventPublisher } from '../dispatch/dispatcher.js';
import { EscalationCounter } from '../dispatch/escalation-counter.js';
import { SharedDedupStore } from '../dispatch/shared-dedup.js';
import type { NumberedEvent } from '../streams/event-hub.js';
import { OutageLog } from './outage-log.js';
import { SharedFanout, type NumberedEventSink } from './shared-fanout.js';

/** What each feature does while Redis is unreachable: the outage's warn line says so. */
const OUTAGE_CONSEQUENCES = {
  dedup: 'fails open: alerts are dispatched, duplicates across replicas possible',
  escalation: "the request's consecutive_count alone decides",
  streams: "each replica's subscribers get its own alerts only, without ids (not replayable)",
};

/** The state the dispatcher and the streams share with the other replicas (or keep to this process). */
export interface Replication {
  /** `memory` (one process, today's behaviour) or `redis` (every replica). */
  backend: SharedState['backend'];
  dedup: DedupGate;
  escalationCounter: EscalationCounter;
  /** Where the dispatcher publishes its events: the hub itself, or the broadcast to every replica's hub. */
  events(hub: EventPublisher & NumberedEventSink): EventPublisher;
  /** Set on Redis: the kept events after an id, for SSE clients resuming with Last-Event-ID. */
  replay?: (afterId: string) => Promise<NumberedEvent[]>;
  /** Starts listening to the other replicas (after `events`). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The longest one dispatch may take (snapshot, then the model, then the rest, each with every attempt and back-off),
 * doubled: how long a replica that died mid-dispatch holds a dedup key before another may run it.
 */
function claimTtlMs(config: AlertDispatchConfig): number {
  const { timeoutMs, maxAttempts, maxDelayMs } = config.tools;
  const oneTool = timeoutMs * maxAttempts + maxDelayMs * (maxAttempts - 1);
  return 2 * (2 * oneTool + (config.llm?.timeoutMs ?? 0));
}

/**
 * Opens the shared state ARGUS_REDIS_URL names (the connection is made now: an unreachable Redis stops start-up)
 * and builds dedup, escalation counting and the fan-out on it; without it, today's in-process pieces.
 */
export async function openReplication(config: AlertDispatchConfig, clock: Clock, logger: Logger): Promise<Replication> {
  const url = config.platform.redisUrl;
  const state = await openSharedState(
    url
      ? { backend: 'redis', url, namespace: 'argus:alert-dispatch:', clientName: 'argus-alert-dispatch' }
      : { backend: 'memory' },
    // Each reconnection attempt reports here; the outage itself is logged once, by the features that notice it.
    (error) => logger.debug('shared state connection error', { error: error.message }),
  );
  const outage = new OutageLog(logger, OUTAGE_CONSEQUENCES);
  const escalationCounter = new EscalationCounter(state, outage);
  if (state.backend === 'memory') {
    return {
      backend: 'memory',
      dedup: new DedupStore(clock, config.dedupMaxEntries),
      escalationCounter,
      events: (hub) => hub,
      start: async () => undefined,
      close: () => state.close(),
    };
  }
  const replica = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const dedup = new SharedDedupStore({ state, clock, outage, replica, claimTtlMs: claimTtlMs(config) });
  let fanout: SharedFanout | undefined;
  return {
    backend: 'redis',
    dedup,
    escalationCounter,
    events: (hub) => (fanout = new SharedFanout({ state, hub, outage, logger, keep: config.streamReplay })),
    replay: (afterId) => fanout!.replay(afterId),
    start: async () => {
      await dedup.start();
      await fanout?.start();
    },
    close: async () => {
      await Promise.allSettled([dedup.close(), fanout?.close()]);
      await state.close();
    },
  };
}
