import { argusAuthorization, outboundRequest, UNRESTRICTED } from '../../lib/outbound/index.js';
import { answerFailed, callFailed } from './service-error.js';

/** An alert as alert-dispatch's POST /api/v1/alerts reads it (the flexible alert). */
export interface Alert {
  alert_type: string;
  source_id: string;
  alert_name: string;
  answer: 'YES';
  reason: string;
  metadata: Record<string, unknown>;
  timestamp: string;
  /** Tools alert-dispatch runs (CAMERA_RULES_ALERT_TOOLS). */
  tools: string[];
  payloads: Array<{
    kind: 'image';
    mime_type: 'image/jpeg';
    encoding: 'base64';
    data_base64: string;
    metadata: Record<string, unknown>;
  }>;
}

/** Where alerts go. */
export interface AlertSink {
  /** Sends the alert; resolves with alert-dispatch's answer in words. */
  send(alert: Alert, signal?: AbortSignal): Promise<string>;
}

/** alert-dispatch over HTTP: `POST {url}/alerts`, any 2xx accepted; with the first API key where keys are set. */
export class AlertDispatchSink implements AlertSink {
  constructor(private readonly options: { url: string; timeoutMs: number; apiKeys?: readonly string[] }) {}

  async send(alert: Alert, signal?: AbortSignal): Promise<string> {
    let response;
    try {
      response = await outboundRequest(`${this.options.url}/alerts`, {
        policy: UNRESTRICTED,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...argusAuthorization(this.options.apiKeys ?? []) },
        body: JSON.stringify(alert),
        timeoutMs: this.options.timeoutMs,
        maxBytes: 64 * 1024,
        signal,
      });
    } catch (error) {
      throw callFailed('alert-dispatch', error);
    }
    if (response.status >= 200 && response.status < 300) {
      response.discard();
      return `alert sent to alert-dispatch (HTTP ${response.status})`;
    }
    throw await answerFailed('alert-dispatch', response);
  }
}
