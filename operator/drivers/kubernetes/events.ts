import { EventsV1Api, V1MicroTime, type EventsV1Event, type KubeConfig } from '@kubernetes/client-node';
import type { EventSink } from '../../ports/index.js';
import { statusCode } from './api-errors.js';

/** The object an Event is about. */
export interface EventSubject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

/** What happened: `reason` is CamelCase, `note` a human sentence (at most 1 kB). */
export interface EventDetail {
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

/** Distinct Events remembered for series updates (the oldest is forgotten first; a repeat then makes a new Event). */
const REMEMBERED_EVENTS = 1024;

/**
 * Records events.k8s.io/v1 Events (what `kubectl get events` and `kubectl describe` show) as this operator
 * replica: `eventTime` is a MicroTime (six fractional digits, which the server requires), the reporting controller
 * and instance name who wrote it. As client-go's event broadcaster does, a repeat of an Event already recorded (same
 * object, type, reason, action and note) updates that Event's `series` (count, lastObservedTime) instead of making
 * another one; an Event gone meanwhile (expired after the server's event TTL) is made anew.
 */
export class EventRecorder {
  private readonly api: EventsV1Api;
  private readonly recorded = new Map<string, EventsV1Event>();
  /** Records one at a time, so that two repeats never race to make the same Event twice. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    config: KubeConfig,
    private readonly reporter: { controller: string; instance: string },
  ) {
    this.api = config.makeApiClient(EventsV1Api);
  }

  /** Records `detail` about `subject`: a new Event, or the series of the same one recorded before. */
  record(subject: EventSubject, detail: EventDetail): Promise<void> {
    const next = this.queue.then(() => this.recordNow(subject, detail));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The EventSink port over this recorder: Events about Argus resources. */
  sink(): EventSink {
    return {
      record: (resource, event) =>
        this.record(
          {
            apiVersion: resource.apiVersion,
            kind: resource.kind,
            namespace: resource.metadata.namespace,
            name: resource.metadata.name,
            uid: resource.metadata.uid,
          },
          event,
        ),
    };
  }

  private async recordNow(subject: EventSubject, detail: EventDetail): Promise<void> {
    const note = Buffer.from(detail.note).subarray(0, 1024).toString();
    const key = JSON.stringify([subject, detail.type, detail.reason, detail.action, note]);
    const now = Date.now();
    const previous = this.recorded.get(key);
    if (previous) {
      const series = { count: (previous.series?.count ?? 1) + 1, lastObservedTime: new V1MicroTime(now) };
      try {
        const updated = await this.api.replaceNamespacedEvent({
          name: previous.metadata!.name!,
          namespace: subject.namespace,
          body: { ...previous, series },
        });
        this.remember(key, updated);
        return;
      } catch (error) {
        if (![404, 409].includes(statusCode(error) ?? 0)) throw error;
      }
    }
    const created = await this.api.createNamespacedEvent({
      namespace: subject.namespace,
      body: {
        metadata: { name: `${subject.name}.${(BigInt(now) * 1_000_000n).toString(16)}`, namespace: subject.namespace },
        eventTime: new V1MicroTime(now),
        reportingController: this.reporter.controller,
        reportingInstance: this.reporter.instance.slice(0, 128),
        action: detail.action,
        reason: detail.reason,
        note,
        type: detail.type,
        regarding: {
          apiVersion: subject.apiVersion,
          kind: subject.kind,
          namespace: subject.namespace,
          name: subject.name,
          ...(subject.uid ? { uid: subject.uid } : {}),
        },
      },
    });
    this.remember(key, created);
  }

  private remember(key: string, event: EventsV1Event): void {
    this.recorded.delete(key);
    this.recorded.set(key, event);
    if (this.recorded.size > REMEMBERED_EVENTS) this.recorded.delete(this.recorded.keys().next().value!);
  }
}
