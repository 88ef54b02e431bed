import { createHash } from 'node:crypto';
import type { Clock } from './clock.js';
import { readFieldPath } from './field-path.js';
import type { ActionRequest, DedupSpec } from './types.js';

/** Defaults of the dedup sub-fields a request or subscription leaves out. */
export const DEDUP_DEFAULTS: Omit<DedupSpec, 'enabled'> = {
  strategy: 'field_hash',
  fields: ['alert_name', 'source_id'],
  window_seconds: 60,
  on_missing: 'skip',
};

/**
 * Result of a dedup check: `key` is null when dedup did not apply to this event. A fresh key is claimed for the
 * caller, who must `settle` it; `pending` is set instead when an earlier dispatch of the same key is still running.
 */
export interface DedupVerdict {
  duplicate: boolean;
  key: string | null;
  reason?: string;
  /** Settles when the running dispatch of this key has; then check again. */
  pending?: Promise<void>;
}

/**
 * Where the dispatcher checks and records dedup keys: DedupStore (this process, synchronous) or SharedDedupStore
 * (every replica, on the shared state).
 */
export interface DedupGate {
  /** Checks `request` against `spec`; a new (or expired) key is claimed for the caller, who then calls `settle`. */
  check(request: ActionRequest, spec: DedupSpec | undefined): DedupVerdict | Promise<DedupVerdict>;
  /** Ends the claim on `key`: a delivered alert opens its window; the waiters wake. */
  settle(key: string, delivered: boolean): void | Promise<void>;
}

/** A key claimed by a running dispatch: when it started and who waits for its outcome. */
interface Claim {
  startedAt: number;
  windowMs: number;
  done: Promise<void>;
  release: () => void;
}

/** Canonical JSON (sorted keys) so that equal values hash equally whatever their key order. */
function canonical(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.keys(value as object)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/**
 * The field_hash key of a request, or null when a field is missing and `on_missing` is `skip`. The fields are a set:
 * their order and repeats do not change the key, so `[source_id, alert_name]` and `[alert_name, source_id]` agree.
 */
export function dedupKey(request: ActionRequest, spec: DedupSpec): string | null {
  const fields = spec.fields.length === 1 ? spec.fields : [...new Set(spec.fields)].sort();
  const values: unknown[] = [];
  for (const field of fields) {
    const value = readFieldPath(request, field);
    if (value === undefined && spec.on_missing === 'skip') return null;
    values.push(value ?? null);
  }
  const material = canonical([fields, values]);
  return createHash('sha256').update(material).digest('hex');
}

/**
 * Remembers the dedup keys of recently delivered alerts in memory: bounded (least recently inserted entries go first
 * once `maxEntries` is reached) and expired lazily. A key is recorded only when its dispatch delivered something (at
 * least one tool succeeded), so a sender's retry of an alert that failed everywhere is not suppressed. While a
 * dispatch of a key runs, later ones wait for its outcome (`pending`): suppressed if it delivered, run if it did not.
 * A hit does not extend the window: an alert repeating forever still gets through once per window.
 */
export class DedupStore implements DedupGate {
  private readonly expiries = new Map<string, number>();
  private readonly running = new Map<string, Claim>();

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = 10_000,
  ) {}

  /** Checks `request` against `spec`; a new (or expired) key is claimed for the caller, who then calls `settle`. */
  check(request: ActionRequest, spec: DedupSpec | undefined): DedupVerdict {
    if (!spec?.enabled) return { duplicate: false, key: null, reason: 'disabled' };
    const key = dedupKey(request, spec);
    if (key === null) return { duplicate: false, key: null, reason: 'missing field' };
    const now = this.clock();
    const expiresAt = this.expiries.get(key);
    if (expiresAt !== undefined && now < expiresAt) return { duplicate: true, key };
    const claim = this.running.get(key);
    if (claim) return { duplicate: false, key, pending: claim.done };
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    this.running.set(key, { startedAt: now, windowMs: spec.window_seconds * 1000, done, release });
    return { duplicate: false, key };
  }

  /** Ends the claim on `key`: a delivered alert opens its window (counted from when it arrived); the waiters wake. */
  settle(key: string, delivered: boolean): void {
    const claim = this.running.get(key);
    if (!claim) return;
    this.running.delete(key);
    if (delivered) {
      const now = this.clock();
      this.expiries.delete(key); // re-insert so Map order stays insertion (= expiry) order per window
      this.expiries.set(key, claim.startedAt + claim.windowMs);
      this.evict(now);
    }
    claim.release();
  }

  /** Number of delivered keys currently remembered (expired ones may linger until the next insert). */
  get size(): number {
    return this.expiries.size;
  }

  private evict(now: number): void {
    for (const [key, expiresAt] of this.expiries) {
      if (this.expiries.size <= this.maxEntries && expiresAt > now) break;
      if (this.expiries.size > this.maxEntries || expiresAt <= now) this.expiries.delete(key);
    }
  }
}
