import { describe, expect, it } from '@jest/globals';
import mqtt from 'mqtt';
import { ConfigError } from '../config/index.js';
import { loadMqttSettings, openProcessBroker, shownBrokerUrl } from './index.js';

describe('the process broker', () => {
  it('without MQTT_BROKER runs an embedded broker on loopback that relays between clients, until closed', async () => {
    const broker = await openProcessBroker(loadMqttSettings({}));
    expect(broker.embedded).toBe(true);
    expect(broker.url).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    const subscriber = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    const publisher = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    try {
      const received = new Promise<string>((resolve) =>
        subscriber.on('message', (topic, payload) => resolve(`${topic} ${payload.toString()}`)),
      );
      await subscriber.subscribeAsync('argus/#', { qos: 1 });
      await publisher.publishAsync('argus/test', 'hello', { qos: 1 });
      expect(await received).toBe('argus/test hello');
    } finally {
      await Promise.all([subscriber.endAsync(true), publisher.endAsync(true)]);
      await broker.close();
    }
    await expect(mqtt.connectAsync(broker.url, { reconnectPeriod: 0, connectTimeout: 2000 })).rejects.toThrow();
  });

  it('drops the clients still connected when closed: a subscriber that stays holds no stop', async () => {
    const broker = await openProcessBroker(loadMqttSettings({}));
    const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    try {
      const dropped = new Promise<void>((resolve) => client.once('close', () => resolve()));
      await broker.close();
      await dropped;
      expect(client.connected).toBe(false);
    } finally {
      await client.endAsync(true);
    }
  });

  it('with MQTT_BROKER uses it and runs none', async () => {
    const settings = loadMqttSettings({ MQTT_BROKER: 'mqtt://mosquitto:1883', ARGUS_MQTT_PORT: '1883' });
    const broker = await openProcessBroker(settings);
    expect(broker).toMatchObject({ url: 'mqtt://mosquitto:1883', embedded: false });
    await broker.close();
  });

  it('refuses a broker address of another scheme and an invalid port, naming both', () => {
    let error: unknown;
    try {
      loadMqttSettings({ MQTT_BROKER: 'http://broker', ARGUS_MQTT_PORT: '70000' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.join('\n')).toMatch(
      /MQTT_BROKER[\s\S]*ARGUS_MQTT_PORT|ARGUS_MQTT_PORT[\s\S]*MQTT_BROKER/,
    );
  });
});

describe('shownBrokerUrl', () => {
  it('drops the login of a broker address, keeps the rest', () => {
    expect(shownBrokerUrl('mqtts://user:s3cret@broker.lan:8883')).toBe('mqtts://broker.lan:8883');
    expect(shownBrokerUrl('mqtt://127.0.0.1:1883')).toBe('mqtt://127.0.0.1:1883');
  });
});
