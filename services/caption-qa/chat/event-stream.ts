import type http from 'node:http';
import { formatSseMessage } from '../../lib/http/index.js';

/** Event names of the chat stream (README: "Stream format"). */
export type ChatEventName = 'sources' | 'token' | 'done' | 'error';

const HEARTBEAT = ': heartbeat\n\n';

/**
 * The chat answer's Server-Sent Events: every event's data is one line of JSON (a newline inside a token cannot
 * break framing), and comment heartbeats keep proxies and clients from timing out while the first token is awaited.
 */
export class ChatEventStream {
  private heartbeat?: NodeJS.Timeout;

  constructor(private readonly res: http.ServerResponse) {}

  /** False once the response has ended or its client has gone. */
  get open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }

  /** Sends one event (dropped once the stream is closed). */
  send(event: ChatEventName, data: unknown): void {
    if (this.open) this.res.write(formatSseMessage({ event, data: JSON.stringify(data) }));
  }

  /** Starts the comment heartbeats, one every `intervalMs`. */
  startHeartbeat(intervalMs: number): void {
    this.stopHeartbeat();
    this.heartbeat = setInterval(() => {
      if (this.open) this.res.write(HEARTBEAT);
    }, intervalMs);
  }

  stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** Stops the heartbeats and ends the response. */
  end(): void {
    this.stopHeartbeat();
    if (this.open) this.res.end();
  }
}
