import {
  API_VERSION as RESOURCE_API_VERSION,
  CAMERA_RULE_ACTIONS,
  CAMERA_RULE_MAX_RESULTS,
  type CameraRule,
  type CameraRuleAction,
  type CameraRuleEventType,
  type CameraRuleResult,
} from '../../../operator/api/index.js';
import { AlreadyExistsError, updateStatusWithRetry, type ResourceStore } from '../../../operator/ports/index.js';
import type { Logger } from '../../lib/log/index.js';
import { objectNameFor } from '../resource-name.js';

/** A rule as the API shows it (the contract's Rule, plus `event_type`). */
export interface RuleView {
  id: string;
  label: string;
  action: CameraRuleAction;
  /** null: every camera. */
  camera: string | null;
  /** null: any source. */
  source: string | null;
  /** Fire on `new` or on `end` (default) events. */
  event_type: CameraRuleEventType;
  /** Read-only: how many recorder events the rule has matched. */
  count: number;
}

/** What claiming an event for a rule gave (see RuleBook.claim). */
export type ClaimOutcome = 'claimed' | 'resumed' | 'done' | 'held';

/** A rule to add, as validated at the edge. */
export type NewRule = Omit<RuleView, 'count'>;

/** The id is taken (400 at the edge, as the contract says). */
export class RuleExistsError extends Error {
  constructor(readonly id: string) {
    super(`Rule with id '${id}' already exists`);
    this.name = 'RuleExistsError';
  }
}

/** No rule has this id (404). */
export class RuleNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`Rule '${id}' not found`);
    this.name = 'RuleNotFoundError';
  }
}

/** The resource store did not answer (503); the cause is logged, never sent. */
export class RuleStoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('The rule store (control plane) is unavailable', { cause });
    this.name = 'RuleStoreUnavailableError';
  }
}

/** Every known action, as 422 answers list them. */
export const KNOWN_ACTIONS: readonly CameraRuleAction[] = CAMERA_RULE_ACTIONS;

/** The object name of a rule id (see objectNameFor). */
export function ruleObjectName(id: string): string {
  return objectNameFor(id, 'rule');
}

/** Oldest first, then by id: the order rules are listed in. */
export function byAge(a: CameraRule, b: CameraRule): number {
  return (
    (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
    a.spec.id.localeCompare(b.spec.id)
  );
}

/** A CameraRule as the API shows it. */
export function ruleView(rule: CameraRule): RuleView {
  const { spec } = rule;
  return {
    id: spec.id,
    label: spec.label,
    action: spec.action,
    camera: spec.camera ?? null,
    source: spec.source ?? null,
    event_type: spec.eventType ?? 'end',
    count: rule.status?.count ?? 0,
  };
}

/**
 * The rules, kept as CameraRule resources in the control plane's store (the API server in the cluster, the embedded
 * store under the data dir): they survive restarts and every replica reads the same ones. Nothing is cached here, so
 * a rule added through one replica is listed at once by all of them (event matching reads a RuleCache instead).
 */
export class RuleBook {
  constructor(
    private readonly store: ResourceStore,
    private readonly namespace: string,
    private readonly logger: Logger,
  ) {}

  /** Runs a store call; anything but AlreadyExistsError becomes RuleStoreUnavailableError, its cause logged. */
  private async guarded<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof AlreadyExistsError) throw error;
      this.logger.error('rule store call failed', { error: (error as Error)?.message ?? String(error) });
      throw new RuleStoreUnavailableError(error);
    }
  }

  /** Every rule, oldest first (then by id). */
  async list(): Promise<RuleView[]> {
    const rules = await this.guarded(() => this.store.list('CameraRule', this.namespace));
    return rules.sort(byAge).map(ruleView);
  }

  async get(id: string): Promise<RuleView> {
    const rule = await this.guarded(() => this.store.get('CameraRule', this.namespace, ruleObjectName(id)));
    if (!rule || rule.spec.id !== id) throw new RuleNotFoundError(id);
    return ruleView(rule);
  }

  /** Adds a rule; RuleExistsError when the id is taken (by this or another replica). */
  async add(rule: NewRule): Promise<RuleView> {
    try {
      const created = await this.guarded(() =>
        this.store.create('CameraRule', {
          apiVersion: RESOURCE_API_VERSION,
          kind: 'CameraRule',
          metadata: {
            name: ruleObjectName(rule.id),
            namespace: this.namespace,
            labels: { 'app.kubernetes.io/managed-by': 'camera-rules' },
          },
          spec: {
            id: rule.id,
            label: rule.label,
            action: rule.action,
            ...(rule.camera === null ? {} : { camera: rule.camera }),
            ...(rule.source === null ? {} : { source: rule.source }),
            eventType: rule.event_type,
          },
        }),
      );
      return ruleView(created);
    } catch (error) {
      if (error instanceof AlreadyExistsError) throw new RuleExistsError(rule.id);
      throw error;
    }
  }

  /** Deletes a rule and answers it as it was; RuleNotFoundError when there is none. */
  async remove(id: string): Promise<RuleView> {
    const rule = await this.get(id);
    const deleted = await this.guarded(() => this.store.delete('CameraRule', this.namespace, ruleObjectName(id)));
    if (!deleted) throw new RuleNotFoundError(id);
    return rule;
  }

  /** Every rule with its latest results (newest first), for the responses endpoints and the event handler. */
  async withResults(): Promise<Array<{ rule: RuleView; results: CameraRuleResult[] }>> {
    const rules = await this.guarded(() => this.store.list('CameraRule', this.namespace));
    return rules.map((rule) => ({ rule: ruleView(rule), results: rule.status?.results ?? [] }));
  }

  /**
   * Claims `eventId` for the rule. `claimed`: recorded `pending` and the match counted — the caller runs the action,
   * renewing the claim (renew) at least every `leaseMs`. `resumed`: the event was pending but its claim had not been
   * renewed for `leaseMs` (the replica running the action stopped), so this caller runs it again (not counted twice).
   * `done`: the rule already has a result for the event (it fired — here, on another replica, or before a restart).
   * `held`: another live claim is running it. Conflict-safe: of replicas claiming at once exactly one wins. `done`
   * also when the rule is gone.
   */
  async claim(id: string, eventId: string, camera: string, now: Date, leaseMs: number): Promise<ClaimOutcome> {
    let outcome: ClaimOutcome = 'done';
    await this.guarded(() =>
      updateStatusWithRetry(this.store, 'CameraRule', this.namespace, ruleObjectName(id), (latest) => {
        outcome = 'done';
        if (latest.spec.id !== id) return undefined;
        const results = latest.status?.results ?? [];
        const at = results.findIndex((r) => r.eventId === eventId);
        const pending: CameraRuleResult = {
          eventId: eventId.slice(0, 256),
          camera: camera.slice(0, 253),
          state: 'pending',
          attempts: 0,
          updatedAt: now.toISOString(),
        };
        if (at >= 0) {
          const found = results[at];
          if (found.state !== 'pending') return undefined;
          if (Date.parse(found.updatedAt) + leaseMs > now.getTime()) {
            outcome = 'held';
            return undefined;
          }
          outcome = 'resumed';
          const next = [...results];
          next[at] = { ...pending, attempts: found.attempts };
          return { ...latest.status, results: next };
        }
        outcome = 'claimed';
        return {
          ...latest.status,
          count: (latest.status?.count ?? 0) + 1,
          lastEventId: pending.eventId,
          results: [pending, ...results].slice(0, CAMERA_RULE_MAX_RESULTS),
        };
      }),
    );
    return outcome;
  }

  /** Renews a claim still pending (its `updatedAt`), so other replicas leave it; false when it is no longer pending. */
  async renew(id: string, eventId: string, now: Date): Promise<boolean> {
    let renewed = false;
    await this.guarded(() =>
      updateStatusWithRetry(this.store, 'CameraRule', this.namespace, ruleObjectName(id), (latest) => {
        const results = latest.status?.results ?? [];
        const at = results.findIndex((r) => r.eventId === eventId && r.state === 'pending');
        renewed = at >= 0;
        if (!renewed) return undefined;
        const next = [...results];
        next[at] = { ...results[at], updatedAt: now.toISOString() };
        return { ...latest.status, results: next };
      }),
    );
    return renewed;
  }

  /** Records what became of a claimed event's action (the result stays in place; nothing when it was trimmed). */
  async settle(id: string, eventId: string, result: Omit<CameraRuleResult, 'eventId' | 'camera'>): Promise<void> {
    await this.guarded(() =>
      updateStatusWithRetry(this.store, 'CameraRule', this.namespace, ruleObjectName(id), (latest) => {
        const results = latest.status?.results ?? [];
        const at = results.findIndex((r) => r.eventId === eventId);
        if (at < 0) return undefined;
        const next = [...results];
        next[at] = { eventId: results[at].eventId, camera: results[at].camera, ...clip(result) };
        return { ...latest.status, results: next };
      }),
    );
  }
}

/** A result's texts within the schema's bounds. */
function clip(result: Omit<CameraRuleResult, 'eventId' | 'camera'>): Omit<CameraRuleResult, 'eventId' | 'camera'> {
  return {
    ...result,
    ...(result.message === undefined ? {} : { message: result.message.slice(0, 1024) }),
    ...(result.result === undefined ? {} : { result: result.result.slice(0, 4096) }),
  };
}
