import {
  API_VERSION,
  TERMINAL_CAPTION_RUN_PHASES,
  type CaptionRun,
  type CaptionRunSpec,
} from '../../../operator/api/index.js';
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { AlreadyExistsError, ConflictError, type ServiceControlPlane } from '../../../operator/ports/index.js';
import { MemorySharedState, type SharedState } from '../../lib/shared-state/index.js';
import { streamKey } from './stream-source.js';
import { newPeerId, randomRunId, RUN_ID_PATTERN, runIdCandidate, runResourceName, sanitiseRunName } from './run-ids.js';

/** How many `_n` suffixes are tried before a run name is called taken. */
const MAX_SUFFIX = 1000;
/** Read-modify-write attempts of a stop before a conflict is given up. */
const MAX_STOP_ATTEMPTS = 20;
/** A start holds its stream's claim this long at most (a replica that died mid-start frees it by then). */
const START_CLAIM_TTL_MS = 30_000;
/** Waits for a stream's claim held by another start before the start is refused as busy. */
const START_CLAIM_WAITS = 100;
const START_CLAIM_WAIT_MS = 50;

/** Another start of the same stream and pipeline held its claim for every wait (503: try again). */
export class StartBusyError extends Error {
  constructor() {
    super('Another start of this stream is in progress; try again');
    this.name = 'StartBusyError';
  }
}

/** A run of the same stream under the same pipeline is already active (409). */
export class DuplicateRunError extends Error {
  constructor(readonly runId: string) {
    super(`This stream is already being captioned under this pipeline (run ${runId})`);
    this.name = 'DuplicateRunError';
  }
}

/** Every `_n` of a run name is taken (409). */
export class RunNameTakenError extends Error {
  constructor() {
    super('runName is taken (too many runs of this name)');
    this.name = 'RunNameTakenError';
  }
}

/** What a new run is, before its ids are chosen. */
export type NewRunSpec = Omit<CaptionRunSpec, 'runId' | 'peerId' | 'stopRequested'>;

/** True while the run is meant to caption: not stopped by DELETE, not ended Stopped or Failed. */
export function isActive(run: CaptionRun): boolean {
  if (run.spec.stopRequested) return false;
  const phase = run.status?.phase;
  return phase === undefined || !TERMINAL_CAPTION_RUN_PHASES.includes(phase);
}

/** The runId of a resource (spec.runId; a resource made by hand without one is known by its name). */
export function runIdOf(run: CaptionRun): string {
  return run.spec.runId ?? run.metadata.name;
}

/**
 * Caption runs as CaptionRun resources in the control plane's store: this class only writes and reads them; the
 * CaptionRun controller runs their workloads and writes their status. A start claims its stream and pipeline in the
 * shared state first (every replica's, with ARGUS_REDIS_URL), so two requests for the same stream — on one replica or
 * two — cannot both pass the duplicate check.
 */
export class CaptionRuns {
  constructor(
    private readonly controlPlane: ServiceControlPlane,
    private readonly shared: SharedState = new MemorySharedState(),
  ) {}

  private get namespace(): string {
    return this.controlPlane.namespace;
  }

  /** Every run of the namespace, oldest first (runs of the same second by runId); `all` false: the active ones only. */
  async list(all: boolean): Promise<CaptionRun[]> {
    const runs = await this.controlPlane.resources.list('CaptionRun', this.namespace);
    return runs
      .filter((run) => all || isActive(run))
      .sort(
        (a, b) =>
          (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
          runIdOf(a).localeCompare(runIdOf(b)),
      );
  }

  /** The run with this runId, or undefined. */
  async get(runId: string): Promise<CaptionRun | undefined> {
    if (!RUN_ID_PATTERN.test(runId)) return undefined;
    const run = await this.controlPlane.resources.get('CaptionRun', this.namespace, runResourceName(runId));
    return run && runIdOf(run) === runId ? run : undefined;
  }

  /**
   * Creates the run's resource: runId from the run name (unique with `_1`, `_2`, …) or random, a new peerId.
   * DuplicateRunError when the same stream already runs under the same pipeline.
   */
  async start(spec: NewRunSpec): Promise<CaptionRun> {
    const stream = createHash('sha256')
      .update(`${streamKey(spec.rtspUrl)}\n${spec.pipelineName}`)
      .digest('hex');
    const key = `start:${this.namespace}:${stream}`;
    const owner = randomUUID();
    for (let wait = 0; !(await this.shared.claim(key, owner, START_CLAIM_TTL_MS)); wait++) {
      if (wait >= START_CLAIM_WAITS) throw new StartBusyError();
      await delay(START_CLAIM_WAIT_MS);
    }
    try {
      return await this.create(spec);
    } finally {
      await this.shared.release(key, owner).catch(() => undefined);
    }
  }

  private async create(spec: NewRunSpec): Promise<CaptionRun> {
    const stream = streamKey(spec.rtspUrl);
    const duplicate = (await this.list(false)).find(
      (run) => streamKey(run.spec.rtspUrl) === stream && run.spec.pipelineName === spec.pipelineName,
    );
    if (duplicate) throw new DuplicateRunError(runIdOf(duplicate));
    const base = sanitiseRunName(spec.runName);
    for (let attempt = 0; attempt <= MAX_SUFFIX; attempt++) {
      const runId = base ? runIdCandidate(base, attempt) : randomRunId();
      try {
        return await this.controlPlane.resources.create('CaptionRun', {
          apiVersion: API_VERSION,
          kind: 'CaptionRun',
          metadata: {
            name: runResourceName(runId),
            namespace: this.namespace,
            labels: { 'app.kubernetes.io/managed-by': 'argus-caption-runs' },
          },
          spec: { ...spec, runId, peerId: newPeerId() },
        });
      } catch (error) {
        if (!(error instanceof AlreadyExistsError)) throw error;
      }
    }
    throw new RunNameTakenError();
  }

  /**
   * Asks the run to stop (spec.stopRequested; the controller stops its workload and marks it Stopped, and it is kept
   * for the retention). Resolves false when there is no such run; stopping a stopped run changes nothing.
   */
  async stop(runId: string): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const run = await this.get(runId);
      if (!run) return false;
      if (run.spec.stopRequested) return true;
      try {
        await this.controlPlane.resources.update('CaptionRun', { ...run, spec: { ...run.spec, stopRequested: true } });
        return true;
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt >= MAX_STOP_ATTEMPTS) throw error;
      }
    }
  }
}
