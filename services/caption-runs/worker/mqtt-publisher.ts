import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from '../../lib/log/index.js';
import type { CaptionPublisher } from './outputs.js';

/** An MQTT connection the worker publishes on, and the way to close it. */
export interface MqttCaptionPublisher extends CaptionPublisher {
  close(): Promise<void>;
}

/**
 * Publishes with QoS 1 over one client (mqtt.js reconnects it and queues publishes while it is away, so a broker
 * restart loses nothing the worker already handed over); `publish` resolves when the broker acknowledged.
 */
export function mqttCaptionPublisher(brokerUrl: string, logger: Logger, clientId: string): MqttCaptionPublisher {
  const client: MqttClient = mqtt.connect(brokerUrl, { reconnectPeriod: 1000, connectTimeout: 5000, clientId });
  client.on('error', (error) => logger.warn('mqtt client error', { error: error.message }));
  return {
    publish: async (topic, payload) => {
      await client.publishAsync(topic, payload, { qos: 1 });
    },
    report: (topic, payload) => {
      client.publish(topic, payload, { qos: 0 }, (error) => {
        if (error) logger.debug('run report not published', { topic, error: error.message });
      });
    },
    close: async () => {
      await client.endAsync(true);
    },
  };
}
