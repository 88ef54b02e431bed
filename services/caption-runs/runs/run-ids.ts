import { createHash, randomBytes } from 'node:crypto';

/** Longest runId: a longer runName is cut before the `_n` that makes it unique is added. */
export const RUN_ID_BASE_MAX = 120;
/** A runId as users see it (and the MQTT topic ends with). */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** The runId a runName asks for: whitespace runs become `_`, other characters outside `[A-Za-z0-9_-]` are dropped. */
export function sanitiseRunName(runName: string): string {
  return runName
    .trim()
    .replace(/\s+/g, '_')
    .replace(/[^A-Za-z0-9_-]/g, '')
    .slice(0, RUN_ID_BASE_MAX);
}

/** Ten random hex characters: the runId of a run without a usable name. */
export function randomRunId(): string {
  return randomBytes(5).toString('hex');
}

/** `s` and seven random hex characters: a run's peerId. */
export function newPeerId(): string {
  return `s${randomBytes(4).toString('hex').slice(0, 7)}`;
}

/** The candidates for a runId, in order: the base, then `base_1`, `base_2`, … */
export function runIdCandidate(base: string, attempt: number): string {
  return attempt === 0 ? base : `${base}_${attempt}`;
}

/**
 * The CaptionRun resource name of a runId. A runId may hold capitals and `_`, which Kubernetes names may not, so the
 * name is derived (`run-` and 20 hex digits of its SHA-256); the runId itself is kept in the spec.
 */
export function runResourceName(runId: string): string {
  return `run-${createHash('sha256').update(runId).digest('hex').slice(0, 20)}`;
}

/** The MQTT topic of a run (the contract's form). */
export function mqttTopic(runId: string): string {
  return `live-video-captioning/${runId}`;
}

/** The topic a run's worker reports its figures on (one level below the captions: `live-video-captioning/+` skips it). */
export function metricsTopic(runId: string): string {
  return `${mqttTopic(runId)}/metrics`;
}
