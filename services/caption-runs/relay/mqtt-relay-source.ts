import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from '../../lib/log/index.js';
import { parseRunReport, REPORT_TOPIC_FILTER, type RunReport } from '../metrics/run-report.js';
import { RELAY_TOPIC_FILTER, type MetadataRelay } from './metadata-relay.js';

/** The relay's MQTT subscription, and the way to end it. */
export interface RelaySource {
  /** Resolves once the broker acknowledged the first subscriptions (messages published after it are relayed). */
  subscribed: Promise<void>;
  close(): Promise<void>;
}

/** Where the workers' reports go (the service's RunMetrics). */
export interface ReportSink {
  record(runId: string, report: RunReport): void;
}

/**
 * Subscribes to `live-video-captioning/+` (captions, QoS 1) and `live-video-captioning/+/metrics` (the workers'
 * reports) on `brokerUrl`: captions go to `relay`, valid reports to `reports`. mqtt.js reconnects and subscribes again
 * after a broker outage (a clean session), so the stream resumes by itself.
 */
export function connectRelay(
  brokerUrl: string,
  relay: MetadataRelay,
  logger: Logger,
  clientId: string,
  reports?: ReportSink,
): RelaySource {
  const client: MqttClient = mqtt.connect(brokerUrl, { reconnectPeriod: 1000, connectTimeout: 5000, clientId });
  let acknowledged!: () => void;
  const subscribed = new Promise<void>((resolve) => (acknowledged = resolve));
  const filters = {
    [RELAY_TOPIC_FILTER]: { qos: 1 as const },
    ...(reports ? { [REPORT_TOPIC_FILTER]: { qos: 0 as const } } : {}),
  };
  client.on('connect', () => {
    client.subscribe(filters, (error) => {
      if (error) logger.warn('the caption relay could not subscribe', { error: error.message });
      else acknowledged();
    });
  });
  client.on('error', (error) => logger.warn('caption relay mqtt error', { error: error.message }));
  client.on('message', (topic, payload) => {
    // `live-video-captioning/{runId}` is a caption (a run may be called `metrics`), one level more a report.
    if (topic.split('/').length === 2) return relay.receive(topic, payload);
    const parsed = reports && parseRunReport(topic, payload);
    if (parsed) reports!.record(parsed.runId, parsed.report);
  });
  return {
    subscribed,
    close: async () => {
      await client.endAsync(true);
    },
  };
}
