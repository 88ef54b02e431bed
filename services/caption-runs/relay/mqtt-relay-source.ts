import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from '../../lib/log/index.js';
import { RELAY_TOPIC_FILTER, type MetadataRelay } from './metadata-relay.js';

/** The relay's MQTT subscription, and the way to end it. */
export interface RelaySource {
  /** Resolves once the broker acknowledged the first subscription (messages published after it are relayed). */
  subscribed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Subscribes to `live-video-captioning/+` (QoS 1) on `brokerUrl` and hands every message to `relay`. mqtt.js
 * reconnects and subscribes again after a broker outage (a clean session), so the stream resumes by itself.
 */
export function connectRelay(brokerUrl: string, relay: MetadataRelay, logger: Logger, clientId: string): RelaySource {
  const client: MqttClient = mqtt.connect(brokerUrl, { reconnectPeriod: 1000, connectTimeout: 5000, clientId });
  let acknowledged!: () => void;
  const subscribed = new Promise<void>((resolve) => (acknowledged = resolve));
  client.on('connect', () => {
    client.subscribe(RELAY_TOPIC_FILTER, { qos: 1 }, (error) => {
      if (error) logger.warn('the caption relay could not subscribe', { error: error.message });
      else acknowledged();
    });
  });
  client.on('error', (error) => logger.warn('caption relay mqtt error', { error: error.message }));
  client.on('message', (topic, payload) => relay.receive(topic, payload));
  return {
    subscribed,
    close: async () => {
      await client.endAsync(true);
    },
  };
}
