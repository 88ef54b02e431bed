import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';

/** How a streamed answer (`stream: true`) is cut into bytes on the wire, to exercise a client's SSE parsing. */
export interface FakeStreamFraming {
  /** Every byte written on its own (chunks split mid-line and mid multi-byte character). */
  byteByByte?: boolean;
  /** `\r\n` line ends instead of `\n`. */
  crlf?: boolean;
  /** A comment line (`: keep-alive`) before every event. */
  comments?: boolean;
  /** Each chunk's JSON spread over several `data:` lines (pretty-printed; the joined lines are the same JSON). */
  multiLineData?: boolean;
}

/** How the fake model answers the next requests. */
export type FakeChatBehaviour =
  /** The answer; when the request says `stream: true`, streamed word by word (each word with its trailing space). */
  | { kind: 'content'; content: string }
  | { kind: 'tool_calls'; calls: Array<{ name: string; arguments: string }> }
  | { kind: 'raw'; body: unknown }
  /** That status with `body` (default: an OpenAI-style error object). */
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'hang' }
  /** A streamed answer (SSE, whatever the request says), one event per token, then `[DONE]`. */
  | {
      kind: 'stream';
      tokens: string[];
      /** The token at this index (0: the first) waits for `releaseHeldToken()`; headers and a role chunk go out at once. */
      holdToken?: number;
      /** After this many tokens the stream fails: an `{"error":...}` event, or the socket destroyed mid-stream. */
      failAfter?: { tokens: number; how: 'error' | 'destroy' };
      /** A pause before each token (a slow stream). */
      gapMs?: number;
      framing?: FakeStreamFraming;
    };

/** An OpenAI-compatible chat-completions server on 127.0.0.1 for tests (the LLM/VLM boundary); records every request. */
export interface FakeChatCompletions {
  /** What a client takes as its base URL (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Every request to POST /v1/chat/completions, in order: the parsed body and the Authorization header. */
  requests: Array<{ body: any; authorization?: string }>;
  behaviour: FakeChatBehaviour;
  /** Resolves once `count` requests have arrived (hanging ones included). */
  waitForRequests(count: number): Promise<void>;
  /** Lets the streams now holding a token (`holdToken`) go on. */
  releaseHeldToken(): void;
  /** How many clients closed their connection before the fake finished its answer (the fake's own failures aside). */
  readonly disconnects: number;
  /** Resolves once `count` clients have disconnected before the end of their answer. */
  waitForDisconnects(count: number): Promise<void>;
  /** How many streams the fake broke on purpose (`failAfter`), and a wait for that count. */
  readonly failures: number;
  waitForFailures(count: number): Promise<void>;
  close(): Promise<void>;
}

/** The chat.completion body that answers a request under `behaviour` (its 200 kinds). */
function completionBody(behaviour: Extract<FakeChatBehaviour, { kind: 'content' | 'tool_calls' | 'raw' }>): unknown {
  if (behaviour.kind === 'raw') return behaviour.body;
  const choice =
    behaviour.kind === 'content'
      ? { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: behaviour.content } }
      : {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: behaviour.calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: c })),
          },
        };
  return { id: 'chatcmpl-test', object: 'chat.completion', choices: [choice] };
}

/** One `chat.completion.chunk` carrying `delta`. */
function chunk(delta: Record<string, unknown>, finishReason: string | null = null): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** A counter whose waiters resolve once it reaches their count. */
class Count {
  value = 0;
  private readonly waiters: Array<{ count: number; resolve: () => void }> = [];

  set(value: number): void {
    this.value = value;
    for (const w of this.waiters.filter((w) => value >= w.count)) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve();
    }
  }

  reached(count: number): Promise<void> {
    return this.value >= count
      ? Promise.resolve()
      : new Promise<void>((resolve) => this.waiters.push({ count, resolve }));
  }
}

/** Writes an SSE answer under `behaviour`; stops as soon as the client is gone. */
async function streamAnswer(
  res: http.ServerResponse,
  behaviour: Extract<FakeChatBehaviour, { kind: 'stream' }>,
  heldTokenGate: () => Promise<void>,
  failingOnPurpose: () => void,
): Promise<void> {
  const framing = behaviour.framing ?? {};
  const eol = framing.crlf ? '\r\n' : '\n';
  // Each write is flushed before the next step, so what was written before a destroy reaches the client.
  const flushed = (bytes: Buffer) =>
    new Promise<void>((resolve, reject) => res.write(bytes, (error) => (error ? reject(error) : resolve())));
  const write = async (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    if (!framing.byteByByte) return flushed(bytes);
    for (const byte of bytes) {
      await flushed(Buffer.of(byte));
      await nextTurn(); // a separate write per byte, so the client sees the splits
    }
  };
  const event = (payload: unknown) => {
    const json = framing.multiLineData ? JSON.stringify(payload, null, 1) : JSON.stringify(payload);
    const lines = json.split('\n').map((line) => `data: ${line}${eol}`);
    return write(`${framing.comments ? `: keep-alive${eol}` : ''}${lines.join('')}${eol}`);
  };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  await event(chunk({ role: 'assistant', content: '' }));
  for (const [i, token] of behaviour.tokens.entries()) {
    if (i === behaviour.holdToken) await heldTokenGate();
    if (behaviour.failAfter && i === behaviour.failAfter.tokens) {
      if (behaviour.failAfter.how === 'destroy') {
        res.destroy();
        failingOnPurpose();
        return;
      }
      await event({ error: { message: 'the model server ran out of memory', type: 'server_error' } });
      res.end();
      failingOnPurpose();
      return;
    }
    if (behaviour.gapMs) await sleep(behaviour.gapMs);
    if (res.destroyed) return;
    await event(chunk({ content: token }));
  }
  await event(chunk({}, 'stop'));
  await write(`data: [DONE]${eol}${eol}`);
  res.end();
}

/** Starts the fake model server (POST /v1/chat/completions), answering as `behaviour` says until it is changed. */
export async function startFakeChatCompletions(behaviour: FakeChatBehaviour): Promise<FakeChatCompletions> {
  const arrived = new Count();
  const disconnected = new Count();
  const failed = new Count();
  let release: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (release = resolve));
  const state: FakeChatCompletions = {
    baseUrl: '',
    requests: [],
    behaviour,
    waitForRequests: (count) => {
      arrived.set(state.requests.length);
      return arrived.reached(count);
    },
    releaseHeldToken: () => {
      release();
      gate = new Promise<void>((resolve) => (release = resolve));
    },
    get disconnects() {
      return disconnected.value;
    },
    waitForDisconnects: (count) => disconnected.reached(count),
    get failures() {
      return failed.value;
    },
    waitForFailures: (count) => failed.reached(count),
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      state.requests.push({ body, authorization: req.headers.authorization });
      arrived.set(state.requests.length); // tests may empty `requests` between cases
      let failedOnPurpose = false;
      res.on('close', () => {
        if (!res.writableFinished && !failedOnPurpose) disconnected.set(disconnected.value + 1);
      });
      const b = state.behaviour;
      if (b.kind === 'hang') return; // never answers: the client's time-out must fire
      if (b.kind === 'status') {
        res.writeHead(b.status, { 'content-type': 'application/json' }).end(b.body ?? '{"error":{"message":"boom"}}');
        return;
      }
      if (b.kind === 'stream' || (b.kind === 'content' && body?.stream === true)) {
        const script: Extract<FakeChatBehaviour, { kind: 'stream' }> =
          b.kind === 'stream' ? b : { kind: 'stream', tokens: b.content.match(/\S+\s*|\s+/g) ?? [] };
        const held = gate;
        const onFailure = () => {
          failedOnPurpose = true;
          failed.set(failed.value + 1);
        };
        void streamAnswer(res, script, () => held, onFailure).catch(() => res.destroy());
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completionBody(b)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.baseUrl = `http://127.0.0.1:${port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      release();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
