import type { MqttSettings } from './mqtt-settings.js';

/** The MQTT broker the services of one process share. */
export interface ProcessBroker {
  /** Where clients connect: MQTT_BROKER, or the embedded broker's `mqtt://host:port`. */
  url: string;
  /** True when this process runs the broker (MQTT_BROKER unset). */
  embedded: boolean;
  /** Stops the embedded broker (dropping its clients); nothing for an external one. */
  close(): Promise<void>;
}

/**
 * The broker of a process that runs services (`argus up`, `argus serve`): MQTT_BROKER when set, else an in-process
 * Aedes broker on ARGUS_MQTT_HOST:ARGUS_MQTT_PORT that every service of the process is given, so that what one
 * publishes (alert-dispatch's `publish_mqtt`, caption-runs' captions) the others and outside subscribers receive.
 */
export async function openProcessBroker(settings: MqttSettings): Promise<ProcessBroker> {
  if (settings.brokerUrl) return { url: settings.brokerUrl, embedded: false, close: async () => undefined };
  // Loaded only here: a process given MQTT_BROKER (and every CLI call) never loads the broker.
  const { startEmbeddedBroker } = await import('./embedded-broker.js');
  const broker = await startEmbeddedBroker(settings.embedded.host, settings.embedded.port);
  return { url: broker.url, embedded: true, close: () => broker.close() };
}

/** A broker address fit for a log line: without the login it may carry (`mqtt://user:password@host`). */
export function shownBrokerUrl(url: string): string {
  try {
    const shown = new URL(url);
    shown.username = '';
    shown.password = '';
    return shown.toString().replace(/\/$/, '');
  } catch {
    return '[invalid broker address]';
  }
}
