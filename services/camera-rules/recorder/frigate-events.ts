import mqtt, { type MqttClient } from 'mqtt';
import { isObject } from '../../lib/json/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { Reachability } from '../health/reachability.js';
import { toRecorderEvent } from './frigate-recorder.js';
import type { RecorderEvent } from './recorder.js';

/** What Frigate says on MQTT that camera-rules uses. */
export type FrigateMessage =
  /** `<prefix>/events`: a tracked object began, changed or ended (`after` is its latest state). */
  | { kind: 'event'; type: 'new' | 'update' | 'end'; event: RecorderEvent }
  /** `<prefix>/tracked_object_update` type `description`: Frigate's GenAI description of one event. */
  | { kind: 'description'; id: string; description: string }
  /** `<prefix>/reviews` with GenAI metadata: a summary of a review item and the event ids it covers. */
  | { kind: 'review-summary'; id: string; camera: string; detections: string[]; summary: string };

/** How to reach the broker Frigate publishes on. */
export interface FrigateFeedOptions {
  broker: string;
  topicPrefix: string;
  logger: Logger;
  /** Wait between reconnection attempts, milliseconds (default 1000). */
  reconnectMs?: number;
}

const EVENT_TYPES = new Set(['new', 'update', 'end']);

/** Frigate's message on `topic` (already JSON-parsed) as a FrigateMessage; undefined for anything else. */
export function parseFrigateMessage(prefix: string, topic: string, payload: unknown): FrigateMessage | undefined {
  if (!isObject(payload)) return undefined;
  if (topic === `${prefix}/events`) {
    const type = payload.type;
    const event = toRecorderEvent(payload.after);
    if (typeof type !== 'string' || !EVENT_TYPES.has(type) || !event) return undefined;
    return { kind: 'event', type: type as 'new' | 'update' | 'end', event };
  }
  if (topic === `${prefix}/tracked_object_update`) {
    if (payload.type !== 'description' || typeof payload.id !== 'string') return undefined;
    if (typeof payload.description !== 'string' || !payload.description) return undefined;
    return { kind: 'description', id: payload.id, description: payload.description };
  }
  if (topic === `${prefix}/reviews`) {
    const after = payload.after;
    if (!isObject(after) || !isObject(after.data) || typeof after.id !== 'string') return undefined;
    const metadata = after.data.metadata;
    if (!isObject(metadata)) return undefined;
    const summary = [metadata.shortSummary, metadata.scene, metadata.title].find(
      (text): text is string => typeof text === 'string' && text.length > 0,
    );
    if (!summary) return undefined;
    const detections = Array.isArray(after.data.detections)
      ? after.data.detections.filter((id): id is string => typeof id === 'string')
      : [];
    return { kind: 'review-summary', id: after.id, camera: String(after.camera ?? ''), detections, summary };
  }
  return undefined;
}

/**
 * Frigate's MQTT messages (`<prefix>/events`, `<prefix>/tracked_object_update`, `<prefix>/reviews`) from a real
 * broker: subscribes on every (re)connection (QoS 1; Frigate publishes QoS 0), reconnects on its own after the broker
 * goes away, and hands each understood message to every listener. Malformed payloads are dropped and counted.
 */
export class FrigateEventFeed {
  private client?: MqttClient;
  private readonly listeners = new Set<(message: FrigateMessage) => void>();
  private readonly connectedListeners = new Set<() => void>();
  private lastError?: string;
  /** Messages dropped because they were not JSON or not in Frigate's shape. */
  dropped = 0;

  constructor(private readonly options: FrigateFeedOptions) {}

  /** Connects (without waiting for the broker: a broker down at start is reconnected to like one that went away). */
  start(): void {
    if (this.client) return;
    const { broker, topicPrefix: prefix, logger } = this.options;
    const client = mqtt.connect(broker, {
      reconnectPeriod: this.options.reconnectMs ?? 1000,
      connectTimeout: 10_000,
      clean: true,
    });
    this.client = client;
    const topics = [`${prefix}/events`, `${prefix}/tracked_object_update`, `${prefix}/reviews`];
    client.on('connect', () => {
      this.lastError = undefined;
      client.subscribe(topics, { qos: 1 }, (error) => {
        if (error) {
          this.lastError = `subscription refused: ${error.message}`;
          logger.warn('frigate topics could not be subscribed', { error: error.message });
          return;
        }
        for (const listener of this.connectedListeners) listener();
      });
    });
    client.on('error', (error) => {
      this.lastError = error.message;
    });
    client.on('offline', () => logger.warn('frigate broker connection lost; reconnecting', { error: this.lastError }));
    client.on('message', (topic, payload) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(payload.toString('utf8'));
      } catch {
        this.dropped++;
        return;
      }
      const message = parseFrigateMessage(prefix, topic, parsed);
      if (!message) {
        this.dropped++;
        return;
      }
      for (const listener of this.listeners) listener(message);
    });
  }

  /** Calls `listener` with every message until the returned function is called. */
  onMessage(listener: (message: FrigateMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` each time the feed is (re)subscribed: the moment to catch up on what was missed. */
  onSubscribed(listener: () => void): () => void {
    this.connectedListeners.add(listener);
    return () => this.connectedListeners.delete(listener);
  }

  get connected(): boolean {
    return this.client?.connected === true;
  }

  /** The broker's state for `/health`. */
  reachability(): Reachability {
    const shown = this.options.broker.replace(/\/\/[^@/]*@/, '//');
    return this.connected
      ? { reachable: true, detail: `${shown} connected` }
      : { reachable: false, detail: `${shown} not connected${this.lastError ? `: ${this.lastError}` : ''}` };
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.endAsync(true);
  }
}
