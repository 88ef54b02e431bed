import type http from 'node:http';
import type Koa from 'koa';

/** One Server-Sent Events message before framing. */
export interface SseMessage {
  event?: string;
  /** Already serialised payload; each of its lines becomes one `data:` line. */
  data: string;
  id?: string | number;
  /** Reconnection delay the client should use, in milliseconds. */
  retry?: number;
}

const LINE_BREAK = /\r\n|\r|\n/;

/** Frames a message per the SSE spec (field lines, blank line terminator); CR/LF in `event`/`id` cannot split a frame. */
export function formatSseMessage(message: SseMessage): string {
  let frame = '';
  if (message.id !== undefined) frame += `id: ${String(message.id).replace(/[\r\n]/g, '')}\n`;
  if (message.event !== undefined) frame += `event: ${message.event.replace(/[\r\n]/g, '')}\n`;
  if (message.retry !== undefined) frame += `retry: ${Math.max(0, Math.floor(message.retry))}\n`;
  for (const line of message.data.split(LINE_BREAK)) frame += `data: ${line}\n`;
  return frame + '\n';
}

/** Headers of an event stream: no caching, no proxy buffering (nginx honours X-Accel-Buffering). */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/**
 * Takes a Koa response over for streaming: sends the SSE headers at once (keeping headers Koa already set, such as
 * the request id), disables the socket idle timeout and Nagle, and tells Koa not to respond itself.
 */
export function openSseResponse(ctx: Koa.Context): http.ServerResponse {
  ctx.status = 200;
  for (const [name, value] of Object.entries(SSE_HEADERS)) ctx.set(name, value);
  ctx.respond = false;
  const res = ctx.res;
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  res.flushHeaders();
  return res;
}
