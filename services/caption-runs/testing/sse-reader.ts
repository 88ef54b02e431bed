/** Reads an event stream's `data:` messages (JSON) as they arrive, with a wait for the ones a test expects. */
export interface SseReader {
  messages: any[];
  /** Resolves once `count` messages have arrived. */
  waitFor(count: number): Promise<any[]>;
  close(): Promise<void>;
}

/** Opens `url` and parses its event stream (every event a `data:` line of JSON). */
export async function readSse(url: string): Promise<SseReader> {
  const abort = new AbortController();
  const response = await fetch(url, { signal: abort.signal });
  if (response.status !== 200) throw new Error(`the stream answered ${response.status}`);
  const messages: any[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      pending += decoder.decode(chunk, { stream: true });
      const frames = pending.split('\n\n');
      pending = frames.pop()!;
      for (const frame of frames) {
        const data = frame
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n');
        if (data) messages.push(JSON.parse(data));
      }
      for (const waiter of waiters.filter((w) => messages.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  })().catch(() => undefined);
  return {
    messages,
    waitFor: async (count) => {
      if (messages.length < count) await new Promise<void>((resolve) => waiters.push({ count, resolve }));
      return messages.slice(0, count);
    },
    close: async () => {
      abort.abort();
      await reading;
    },
  };
}
