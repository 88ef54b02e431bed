import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { statusCode } from './api-errors.js';

/** Timing of leader election (client-go's defaults are 15 s, 10 s and 2 s). */
export interface LeaderElectionTiming {
  /** A standby takes over when the Lease has not changed for this long, on its own clock. */
  leaseDurationMs: number;
  /** A leader that has not renewed for this long stops leading (before any standby may take over). */
  renewDeadlineMs: number;
  /** Time between attempts to acquire or renew. */
  retryPeriodMs: number;
}

/** Who runs for leader, where, and what happens when leadership changes. */
export interface LeaderElectionOptions extends LeaderElectionTiming {
  namespace: string;
  /** Name of the coordination.k8s.io/v1 Lease. */
  name: string;
  /** This candidate's identity (the pod name). */
  identity: string;
  /** Leadership begins: start reconciling. */
  onStartedLeading(): void;
  /** Leadership ends (lost or released): stop reconciling. Awaited before the Lease is released. */
  onStoppedLeading(): void | Promise<void>;
  /** Another holder was seen (or the Lease was released: empty identity). */
  onNewLeader?(identity: string): void;
  /** An attempt failed for a reason other than losing a race (logged by the caller). */
  onError?(error: unknown): void;
}

/** MicroTime as a Lease needs it: six fractional digits (client-node's V1MicroTime serialises so). */
function microTime(ms = Date.now()): V1MicroTime {
  return new V1MicroTime(ms);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from the API server within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: the Lease is created with a name and
 * updated with the resourceVersion that was read, so of two candidates only one wins; a standby judges expiry by how
 * long it has seen the record unchanged on its own monotonic clock (never by renewTime: clocks skew); a leader that
 * cannot renew within `renewDeadlineMs` stops leading, which is before any standby can take over
 * (`renewDeadlineMs` < `leaseDurationMs`); `stop()` releases the Lease so a standby takes over at once.
 */
export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private leading = false;
  private stopped = false;
  private observedVersion?: string;
  private observedAt = 0;
  private observedHolder?: string;
  private deadline?: NodeJS.Timeout;
  private wake?: () => void;
  private loop?: Promise<void>;

  constructor(
    config: KubeConfig,
    private readonly options: LeaderElectionOptions,
  ) {
    const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = options;
    if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs * 1.2 && retryPeriodMs > 0)) {
      throw new Error('leader election needs leaseDuration > renewDeadline > 1.2 × retryPeriod > 0');
    }
    this.api = config.makeApiClient(CoordinationV1Api);
  }

  /** Whether this candidate leads now. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts running for leader (and renewing while leading) until stop(). */
  start(): void {
    this.loop ??= this.run();
  }

  /** Stops: leadership ends (onStoppedLeading awaited), then the Lease is released so a standby need not wait. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    if (!this.leading) return;
    await this.loseLeadership();
    await this.release().catch((error) => this.options.onError?.(error));
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const acquired = await withTimeout(this.tryAcquireOrRenew(), this.options.renewDeadlineMs).catch((error) => {
        this.options.onError?.(error);
        return false;
      });
      if (this.stopped) return;
      if (acquired) this.renewed();
      const { retryPeriodMs } = this.options;
      // Standbys spread their attempts (client-go's jitter), a leader renews on the beat.
      await this.sleep(this.leading ? retryPeriodMs : retryPeriodMs * (1 + Math.random() * 0.2));
    }
  }

  private renewed(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => void this.loseLeadership(), this.options.renewDeadlineMs);
    if (!this.leading) {
      this.leading = true;
      this.options.onStartedLeading();
    }
  }

  private async loseLeadership(): Promise<void> {
    clearTimeout(this.deadline);
    if (!this.leading) return;
    this.leading = false;
    await this.options.onStoppedLeading();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private durationSeconds(): number {
    return Math.max(1, Math.ceil(this.options.leaseDurationMs / 1000));
  }

  /** One attempt: true when this candidate holds the Lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.options;
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (statusCode(error) !== 404) throw error;
      return this.create();
    }
    const spec = lease.spec ?? {};
    const now = performance.now();
    if (lease.metadata?.resourceVersion !== this.observedVersion) {
      this.observedVersion = lease.metadata?.resourceVersion;
      this.observedAt = now;
    }
    const holder = spec.holderIdentity ?? '';
    if (holder !== this.observedHolder) {
      this.observedHolder = holder;
      if (holder !== identity) this.options.onNewLeader?.(holder);
    }
    if (holder && holder !== identity && now < this.observedAt + this.options.leaseDurationMs) return false;
    const mine = holder === identity;
    const body: V1Lease = {
      ...lease,
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: this.durationSeconds(),
        acquireTime: mine && spec.acquireTime ? spec.acquireTime : microTime(),
        renewTime: microTime(),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    };
    return this.claim(() => this.api.replaceNamespacedLease({ name, namespace, body }));
  }

  private create(): Promise<boolean> {
    const { namespace, name, identity } = this.options;
    return this.claim(() =>
      this.api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: this.durationSeconds(),
            acquireTime: microTime(),
            renewTime: microTime(),
            leaseTransitions: 0,
          },
        },
      }),
    );
  }

  /**
   * Writes the Lease with this candidate as its holder: true, and the written record observed, when the write won;
   * false on 409 (another candidate wrote first, or the record changed since it was read).
   */
  private async claim(write: () => Promise<V1Lease>): Promise<boolean> {
    try {
      const written = await write();
      this.observedVersion = written.metadata?.resourceVersion;
      this.observedAt = performance.now();
      this.observedHolder = this.options.identity;
      return true;
    } catch (error) {
      if (statusCode(error) === 409) return false;
      throw error;
    }
  }

  /** Gives the Lease up (client-go's ReleaseOnCancel): empty holder, so a standby takes it on its next attempt. */
  private async release(): Promise<void> {
    const { namespace, name, identity } = this.options;
    const lease = await this.api.readNamespacedLease({ name, namespace });
    if (lease.spec?.holderIdentity !== identity) return;
    await this.api.replaceNamespacedLease({
      name,
      namespace,
      body: {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: microTime(),
          renewTime: microTime(),
        },
      },
    });
  }
}
