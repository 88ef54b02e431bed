import { EventsV1Api, V1MicroTime, type KubeConfig } from '@kubernetes/client-node';

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

/**
 * Records events.k8s.io/v1 Events (what `kubectl get events` and `kubectl describe` show) as this operator
 * replica: `eventTime` is a MicroTime (six fractional digits, which the server requires), the reporting controller
 * and instance name who wrote it.
 */
export class EventRecorder {
  private readonly api: EventsV1Api;

  constructor(
    config: KubeConfig,
    private readonly reporter: { controller: string; instance: string },
  ) {
    this.api = config.makeApiClient(EventsV1Api);
  }

  /** Creates one Event about `subject`. */
  async record(subject: EventSubject, detail: EventDetail): Promise<void> {
    const now = Date.now();
    await this.api.createNamespacedEvent({
      namespace: subject.namespace,
      body: {
        metadata: { name: `${subject.name}.${(BigInt(now) * 1_000_000n).toString(16)}`, namespace: subject.namespace },
        eventTime: new V1MicroTime(now),
        reportingController: this.reporter.controller,
        reportingInstance: this.reporter.instance.slice(0, 128),
        action: detail.action,
        reason: detail.reason,
        note: Buffer.from(detail.note).subarray(0, 1024).toString(),
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
  }
}
