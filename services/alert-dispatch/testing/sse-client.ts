import { checkStreamEvent } from '../../../test/support/contract-check.js';
/** One SSE message as a test reads it. */
export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

/** An open SSE stream, read message by message. */
export interface SseClient {
  /** Resolves with the next message matching `predicate` (others read on the way are kept in `seen`). */
  next(predicate: (event: SseEvent) => boolean): Promise<SseEvent>;
  /** Every message read so far, in order. */
  seen: SseEvent[];
  close(): void;
}

/** Opens `url` as an event stream (with `Last-Event-ID` when given) and waits for its `init`. */
export async function openSse(url: string, lastEventId?: string): Promise<SseClient> {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: abort.signal,
  });
  if (response.status !== 200) throw new Error(`SSE answered ${response.status}`);
  // Every event read is checked against the service's document, as the contract check does for whole answers.
  const doc = (await (await fetch(new URL('/openapi.json', url))).json()) as Record<string, unknown>;
  const operation = { method: 'get', path: new URL(url).pathname };
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const seen: SseEvent[] = [];
  let text = '';
  let consumed = 0;
  const client: SseClient = {
    seen,
    close: () => abort.abort(),
    next: async (predicate) => {
      for (;;) {
        while (consumed < seen.length) {
          const event = seen[consumed++];
          if (predicate(event)) return event;
        }
        let cut: number;
        while ((cut = text.indexOf('\n\n')) >= 0) {
          const frame = text.slice(0, cut);
          text = text.slice(cut + 2);
          const data = frame
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('\n');
          const event: SseEvent = {
            id: /^id: (.*)$/m.exec(frame)?.[1],
            event: /^event: (.*)$/m.exec(frame)?.[1] ?? 'message',
            data: data ? JSON.parse(data) : null,
          };
          checkStreamEvent('alert-dispatch', doc, operation, event);
          seen.push(event);
        }
        if (consumed < seen.length) continue;
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        text += decoder.decode(value, { stream: true });
      }
    },
  };
  await client.next((event) => event.event === 'init');
  return client;
}
