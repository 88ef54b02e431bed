export { loadMqttSettings, mqttBrokerUrl, mqttSettings, type MqttSettings } from './mqtt-settings.js';
export { openProcessBroker, shownBrokerUrl, type ProcessBroker } from './process-broker.js';
