import { createParser } from 'eventsource-parser';

/** Characters one unfinished line or event may hold before the stream counts as broken (memory stays bounded). */
const MAX_EVENT_CHARS = 1 << 20;

/**
 * Turns the bytes of a `text/event-stream` body, split anywhere (mid-line, mid-character), into the data of each
 * complete event, in order. Comments, `\r\n`, multi-line data and the other SSE fields follow the SSE specification
 * (eventsource-parser); a trailing event without its blank line is dropped, as the specification says.
 */
export class SseDataDecoder {
  private readonly text = new TextDecoder('utf-8');
  private readonly ready: string[] = [];
  private overflow = false;
  private readonly parser = createParser({
    maxBufferSize: MAX_EVENT_CHARS,
    onEvent: (event) => this.ready.push(event.data),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') this.overflow = true;
    },
  });

  /** The data of the events that `bytes` completes; throws when one event grows past the bound. */
  push(bytes: Uint8Array): string[] {
    this.feed(this.text.decode(bytes, { stream: true }));
    return this.ready.splice(0);
  }

  /** The data of the events the end of the body completes. */
  end(): string[] {
    this.feed(this.text.decode());
    return this.ready.splice(0);
  }

  private feed(chunk: string): void {
    if (!this.overflow && chunk) this.parser.feed(chunk);
    if (this.overflow) throw new RangeError(`an event longer than ${MAX_EVENT_CHARS} characters`);
  }
}
