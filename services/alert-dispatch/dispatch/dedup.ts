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

/** Result of a dedup check: `key` is null when dedup did not apply to this event. */
export interface DedupVerdict {
  duplicate: boolean;
  key: string | null;
  reason?: string;
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

/** The field_hash key of a request, or null when a field is missing and `on_missing` is `skip`. */
export function dedupKey(request: ActionRequest, spec: DedupSpec): string | null {
  const values: unknown[] = [];
  for (const field of spec.fields) {
    const value = readFieldPath(request, field);
    if (value === undefined && spec.on_missing === 'skip') return null;
    values.push(value ?? null);
  }
  const material = canonical([spec.fields, values]);
  return createHash('sha256').update(material).digest('hex');
}

/**
 * Remembers recently seen dedup keys in memory: bounded (least recently inserted entries go first once `maxEntries`
 * is reached) and expired lazily. A hit does not extend the window: an alert repeating forever still gets through
 * once per window.
 */
export class DedupStore {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = 10_000,
  ) {}

  /** Checks `request` against `spec`; records the key when it is new (or its window has passed). */
  check(request: ActionRequest, spec: DedupSpec | undefined): DedupVerdict {
    if (!spec?.enabled) return { duplicate: false, key: null, reason: 'disabled' };
    const key = dedupKey(request, spec);
    if (key === null) return { duplicate: false, key: null, reason: 'missing field' };
    const now = this.clock();
    const expiresAt = this.expiries.get(key);
    if (expiresAt !== undefined && now < expiresAt) return { duplicate: true, key };
    this.expiries.delete(key); // re-insert so Map order stays insertion (= expiry) order per window
    this.expiries.set(key, now + spec.window_seconds * 1000);
    this.evict(now);
    return { duplicate: false, key };
  }

  /** Number of keys currently remembered (expired ones may linger until the next insert). */
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
