export { loadMqttSettings, mqttBrokerUrl, mqttSettings, MQTT_URL_SCHEMES, type MqttSettings } from './mqtt-settings.js';
export { openProcessBroker, shownBrokerUrl, type ProcessBroker } from './process-broker.js';
