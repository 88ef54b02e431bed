import Joi from 'joi';
import { envPort, loadConfig, type SettingsScope } from '../config/index.js';

/** URL schemes an MQTT broker address may use (mqtt.js's transports). */
const MQTT_URL_SCHEMES = ['mqtt', 'mqtts', 'tcp', 'ssl', 'ws', 'wss'];

/** The Joi rule of a broker address (`MQTT_BROKER`), for every component that reads one. */
export const mqttBrokerUrl = () => Joi.string().uri({ scheme: MQTT_URL_SCHEMES });

/** Which broker a process that runs services uses. */
export interface MqttSettings {
  /** MQTT_BROKER: an external broker; undefined: the process runs an embedded one at `embedded`. */
  brokerUrl?: string;
  /** Where the embedded broker listens (ARGUS_MQTT_HOST, ARGUS_MQTT_PORT; port 0: any free port). */
  embedded: { host: string; port: number };
}

interface MqttEnv {
  MQTT_BROKER?: string;
  ARGUS_MQTT_HOST: string;
  ARGUS_MQTT_PORT: number;
}

const schema = Joi.object<MqttEnv, true>({
  MQTT_BROKER: mqttBrokerUrl().description('External MQTT broker; unset: argus up runs an embedded one'),
  ARGUS_MQTT_HOST: Joi.string().default('127.0.0.1').description('Where the embedded MQTT broker listens'),
  // Any free port by default: two Argus processes (or a local mosquitto) never clash; set it to subscribe from outside.
  ARGUS_MQTT_PORT: envPort().default(0).description('Port of the embedded MQTT broker (0: any free port)'),
});

/** What the process's broker reads from the environment (its names are the platform's and the services' prefixes). */
export const mqttSettings: SettingsScope = { schema, prefixes: [] };

/** The broker settings from `env`; throws ConfigError listing every problem. */
export function loadMqttSettings(env: NodeJS.ProcessEnv): MqttSettings {
  const c = loadConfig('mqtt', schema, env);
  return { brokerUrl: c.MQTT_BROKER, embedded: { host: c.ARGUS_MQTT_HOST, port: c.ARGUS_MQTT_PORT } };
}
