import { SharedStateUnavailableError, type SharedState } from '../../lib/shared-state/index.js';
import type { OutageLog } from '../shared/outage-log.js';
import type { Clock } from './clock.js';
import { dedupKey, type DedupGate, type DedupVerdict } from './dedup.js';
import type { ActionRequest, DedupSpec } from './types.js';

/** Collaborators and bounds of a SharedDedupStore. */
export interface SharedDedupOptions {
  state: SharedState;
  clock: Clock;
  outage: OutageLog;
  /** Names this replica in its claims (unique per process). */
  replica: string;
  /** How long a claim outlives a replica that died mid-dispatch: longer than any dispatch may take. */
  claimTtlMs: number;
  /** Longest wait for another replica's outcome before looking again, should its notice be lost. */
  recheckMs?: number;
}

/** A dispatch of this process holding a key; `shared` is false when the claim could not be taken (outage). */
interface LocalClaim {
  startedAt: number;
  windowMs: number;
  owner: string;
  shared: boolean;
  done: Promise<void>;
  release: () => void;
}

/** A dispatch of this process waiting for another replica's outcome on a key. */
interface RemoteWait {
  done: Promise<void>;
  wake: () => void;
}

/** The channel on which a replica announces that it settled a key. */
const SETTLED_CHANNEL = 'dedup-settled';

/**
 * The dedup windows of every replica, on the shared state — DedupStore's rules across processes:
 * - `delivered:<key>` marks a delivered alert until its window (counted from its arrival) ends;
 * - `running:<key>` is claimed (SET NX) by the one dispatch that runs a key; copies in this process wait for it as
 *   DedupStore's do, copies on another replica wait for its outcome, announced on a broadcast channel when it settles
 *   (and look again at least every `recheckMs`, so a lost notice or a replica that died costs a delay, never a hang:
 *   a dead replica's claim expires after `claimTtlMs`);
 * - shared state unreachable: dedup **fails open** — the alert is dispatched (copies in this process still wait for
 *   each other), because a possible duplicate is better than a lost alert; the outage is logged once.
 */
export class SharedDedupStore implements DedupGate {
  private readonly running = new Map<string, LocalClaim>();
  private readonly waits = new Map<string, RemoteWait>();
  private readonly recheckMs: number;
  private unsubscribe?: () => Promise<void>;
  private claims = 0;

  constructor(private readonly options: SharedDedupOptions) {
    this.recheckMs = options.recheckMs ?? 1000;
  }

  /** Listens for other replicas' outcomes; before the first check. */
  async start(): Promise<void> {
    this.unsubscribe = await this.options.state.subscribe(SETTLED_CHANNEL, (entry) =>
      this.waits.get(entry.item)?.wake(),
    );
  }

  /** Stops listening; waiting checks look again at once. */
  async close(): Promise<void> {
    await this.unsubscribe?.().catch(() => undefined);
    for (const wait of this.waits.values()) wait.wake();
  }

  async check(request: ActionRequest, spec: DedupSpec | undefined): Promise<DedupVerdict> {
    if (!spec?.enabled) return { duplicate: false, key: null, reason: 'disabled' };
    const key = dedupKey(request, spec);
    if (key === null) return { duplicate: false, key: null, reason: 'missing field' };
    const local = this.running.get(key);
    if (local) return { duplicate: false, key, pending: local.done };
    // Held before the first await, so copies arriving meanwhile in this process wait here rather than ask Redis.
    const claim = this.hold(key, spec.window_seconds * 1000);
    const { state, outage } = this.options;
    try {
      if ((await state.get(`delivered:${key}`)) !== undefined) {
        this.drop(key, claim);
        outage.succeeded();
        return { duplicate: true, key };
      }
      claim.shared = await state.claim(`running:${key}`, claim.owner, this.options.claimTtlMs);
      outage.succeeded();
      if (claim.shared) return { duplicate: false, key };
      // Another replica runs this key: wait for its outcome, then look again.
      this.drop(key, claim);
      return { duplicate: false, key, pending: this.remoteOutcome(key) };
    } catch (error) {
      if (!(error instanceof SharedStateUnavailableError)) throw error;
      outage.failed('dedup', error);
      return { duplicate: false, key };
    }
  }

  async settle(key: string, delivered: boolean): Promise<void> {
    const claim = this.running.get(key);
    if (!claim) return;
    const { state, outage, clock } = this.options;
    try {
      // Recorded before the claim goes, so that whoever looks next sees the outcome.
      if (delivered) await state.set(`delivered:${key}`, '1', Math.max(1, claim.startedAt + claim.windowMs - clock()));
      if (claim.shared) {
        await state.release(`running:${key}`, claim.owner);
        await state.broadcast(SETTLED_CHANNEL, key, 1);
      }
      outage.succeeded();
    } catch (error) {
      if (!(error instanceof SharedStateUnavailableError)) throw error;
      outage.failed('dedup', error);
    } finally {
      this.drop(key, claim);
    }
  }

  private hold(key: string, windowMs: number): LocalClaim {
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const owner = `${this.options.replica}:${++this.claims}`;
    const claim: LocalClaim = { startedAt: this.options.clock(), windowMs, owner, shared: false, done, release };
    this.running.set(key, claim);
    return claim;
  }

  private drop(key: string, claim: LocalClaim): void {
    if (this.running.get(key) === claim) this.running.delete(key);
    claim.release();
  }

  /** Settles when another replica announces `key` settled, or after `recheckMs` at the latest. */
  private remoteOutcome(key: string): Promise<void> {
    const existing = this.waits.get(key);
    if (existing) return existing.done;
    let wake!: () => void;
    const done = new Promise<void>((resolve) => (wake = resolve));
    const timer = setTimeout(() => wait.wake(), this.recheckMs);
    timer.unref();
    const wait: RemoteWait = {
      done,
      wake: () => {
        clearTimeout(timer);
        if (this.waits.get(key) === wait) this.waits.delete(key);
        wake();
      },
    };
    this.waits.set(key, wait);
    return done;
  }
}
