import type { AnyResource } from '../api/index.js';

/** Something a user debugging a resource wants to see (`kubectl describe`, `kubectl get events`). */
export interface ResourceEvent {
  type: 'Normal' | 'Warning';
  /** CamelCase, what happened (`JobCreated`, `Unschedulable`, `Completed`). */
  reason: string;
  /** What the controller did or saw (`Create`, `Wait`, `Finish`). */
  action: string;
  /** A sentence for humans. */
  note: string;
}

/**
 * Records Events about resources. An Event that repeats one already recorded about the same resource updates that
 * one's count rather than adding another. Best effort: callers log a failure and go on.
 */
export interface EventSink {
  record(resource: AnyResource, event: ResourceEvent): Promise<void>;
}
