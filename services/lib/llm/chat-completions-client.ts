import { CallScope } from './call-scope.js';
import { EagerBody } from './eager-body.js';
import type { ChatAnswer, ChatRequest, ChatTool, ChatToolCall } from './chat-request.js';
import type { LlmConfig } from './llm-config.js';
import { LlmError } from './llm-error.js';
import { SseDataDecoder } from './sse-data-decoder.js';
import { processUserAgent } from '../user-agent/index.js';

/** Bytes of an error body read for the message of a `status` error; the rest is never read. */
const ERROR_BODY_BYTES = 2048;
/** Characters of upstream text an error message carries at most. */
const EXCERPT_CHARS = 200;
/** Bytes of a whole (non-streamed) answer at most: far above any real completion, a bound on a runaway server. */
const MAX_ANSWER_BYTES = 16 << 20;

/**
 * A chat-completions body, stream chunk or error body as far as the client reads it. The LLM may send any JSON: every
 * read is guarded (`?.`, `typeof`, `Array.isArray`), so another shape reads as a missing field.
 */
interface CompletionWire {
  error?: string | { message?: unknown };
  detail?: unknown;
  message?: unknown;
  choices?: Array<{ message?: { content?: unknown; tool_calls?: unknown }; delta?: { content?: unknown } }>;
}

/** One entry of an answer's `tool_calls`, as far as the client reads it (guarded like CompletionWire). */
interface ToolCallWire {
  function?: { name?: unknown; arguments?: unknown };
}

/**
 * A client of an OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, OVMS, llama.cpp server, Ollama): POST
 * `{baseUrl}/chat/completions`, `Authorization: Bearer <key>` only when a key is set. Every failure is an LlmError
 * whose message never holds the key.
 */
export class ChatCompletionsClient {
  /** The model name sent with every request. */
  readonly model: string;
  private readonly url: string;

  constructor(private readonly config: LlmConfig) {
    this.model = config.model;
    this.url = `${config.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  /** Whole answer (stream: false). */
  async complete(request: ChatRequest, signal?: AbortSignal): Promise<string> {
    const { content } = await this.answer(request, signal);
    if (typeof content !== 'string') throw new LlmError('protocol', 'the LLM answer has no message content');
    return content;
  }

  /** The whole assistant message (stream: false): text and function calls, for requests that offer `tools`. */
  async answer(request: ChatRequest, signal?: AbortSignal): Promise<ChatAnswer> {
    const scope = new CallScope(this.config.timeoutMs, signal);
    try {
      const response = await this.post(request, false, scope);
      return this.wholeAnswer(await scope.guard(readAnswer(response), 'answer'));
    } finally {
      scope.close();
    }
  }

  /**
   * Content deltas as they arrive (stream: true, SSE `data:` lines, `[DONE]`). Ends normally at [DONE]; an upstream
   * `error` payload (`protocol`) or a body that ends before [DONE] (`network`) throws after the deltas already
   * yielded. Aborting `signal` or leaving the loop early cancels the upstream request at once.
   */
  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<string> {
    const scope = new CallScope(this.config.timeoutMs, signal);
    try {
      const response = await this.post(request, true, scope);
      if (response.headers.get('content-type')?.includes('application/json')) {
        // A server (or proxy) that does not stream answers with the whole completion: one delta.
        const { content } = this.wholeAnswer(await scope.guard(readAnswer(response), 'answer'));
        if (content) yield content;
        return;
      }
      if (!response.body) throw new LlmError('protocol', 'the LLM answered without a body');
      const body = new EagerBody(response.body.getReader());
      const decoder = new SseDataDecoder();
      for (;;) {
        const bytes = await scope.guard(body.read(), 'token');
        const done = bytes === undefined;
        const events = done ? decoder.end() : this.decode(decoder, bytes);
        for (const data of events) {
          scope.progress();
          if (data.trim() === '[DONE]') return;
          const delta = this.delta(data);
          if (delta) {
            yield delta;
            scope.progress();
          }
        }
        if (done) throw new LlmError('network', 'the LLM stream ended before [DONE]');
      }
    } finally {
      scope.close();
    }
  }

  /** Sends the request; resolves with a 2xx response (headers read), throws the LlmError otherwise. */
  private async post(request: ChatRequest, stream: boolean, scope: CallScope): Promise<Response> {
    scope.throwIfCallerAborted();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      'user-agent': processUserAgent(),
    };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    const body = {
      model: this.model,
      messages: request.messages,
      stream,
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.tools ? { tools: request.tools.map(functionTool), tool_choice: 'auto' } : {}),
    };
    const response = await scope.guard(
      fetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal: scope.signal }),
      'response',
    );
    scope.progress();
    if (response.ok) return response;
    const { text } = await scope
      .guard(readPrefix(response, ERROR_BODY_BYTES), 'error body')
      .catch(() => ({ text: '' }));
    const excerpt = this.upstreamMessage(parseOr(text)) || this.excerpt(text);
    throw new LlmError(
      'status',
      `the LLM answered HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`,
      response.status,
    );
  }

  /** The assistant message of a whole (non-streamed) chat completion body. */
  private wholeAnswer(text: string): ChatAnswer {
    let body: CompletionWire | null;
    try {
      body = JSON.parse(text);
    } catch {
      throw new LlmError('protocol', 'the LLM answer is not JSON');
    }
    if (body?.error) throw new LlmError('protocol', `the LLM reported an error: ${this.upstreamMessage(body)}`);
    const message = body?.choices?.[0]?.message;
    if (!message || typeof message !== 'object') throw new LlmError('protocol', 'the LLM answer has no message');
    return {
      content: typeof message.content === 'string' ? message.content : null,
      toolCalls: Array.isArray(message.tool_calls) ? toolCalls(message.tool_calls) : undefined,
    };
  }

  private decode(decoder: SseDataDecoder, bytes: Uint8Array): string[] {
    try {
      return decoder.push(bytes);
    } catch (error) {
      throw new LlmError('protocol', `the LLM stream is unreadable: ${(error as Error).message}`);
    }
  }

  /** The content delta of one stream chunk ('' when it carries none: a role, a finish reason, usage). */
  private delta(data: string): string {
    let chunk: CompletionWire | null;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new LlmError('protocol', 'the LLM stream carried a chunk that is not JSON');
    }
    if (chunk?.error) throw new LlmError('protocol', `the LLM failed mid-stream: ${this.upstreamMessage(chunk)}`);
    const content = chunk?.choices?.[0]?.delta?.content;
    return typeof content === 'string' ? content : '';
  }

  /** The message inside an OpenAI-style error body (`{error:{message}}`, `{error:"..."}`, `{detail}`), excerpted. */
  private upstreamMessage(parsed: unknown): string {
    const body = parsed as CompletionWire | null | undefined;
    const error = body?.error;
    const message = typeof error === 'string' ? error : (error?.message ?? body?.detail ?? body?.message);
    return typeof message === 'string' ? this.excerpt(message) : '';
  }

  /** Upstream text made safe for a message: one line, bounded, the key (some servers echo it) redacted. */
  private excerpt(text: string): string {
    let safe = text.replace(/\s+/g, ' ').trim();
    if (this.config.apiKey) safe = safe.split(this.config.apiKey).join('[redacted]');
    return safe.length > EXCERPT_CHARS ? `${safe.slice(0, EXCERPT_CHARS)}…` : safe;
  }
}

/** At most `limit` bytes of the body as text, and whether that was all of it; the rest is cancelled unread. */
async function readPrefix(response: Response, limit: number): Promise<{ text: string; whole: boolean }> {
  if (!response.body) return { text: '', whole: true };
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  let whole = false;
  try {
    while (size <= limit) {
      const { done, value } = await reader.read();
      if (done) {
        whole = true;
        break;
      }
      parts.push(value);
      size += value.byteLength;
    }
  } finally {
    if (!whole) await reader.cancel().catch(() => undefined);
  }
  return { text: new TextDecoder().decode(Buffer.concat(parts).subarray(0, limit)), whole: whole && size <= limit };
}

/** The whole body of a non-streamed answer; a body past MAX_ANSWER_BYTES is a protocol error. */
async function readAnswer(response: Response): Promise<string> {
  const { text, whole } = await readPrefix(response, MAX_ANSWER_BYTES);
  if (!whole) throw new LlmError('protocol', `the LLM answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  return text;
}

/** `text` parsed as JSON, or undefined. */
function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A tool as the chat-completions API takes it. */
function functionTool(tool: ChatTool): unknown {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** The function calls of an answer; entries without a function name are not calls. */
function toolCalls(raw: unknown[]): ChatToolCall[] {
  return raw.flatMap((call) => {
    const fn = (call as ToolCallWire | null)?.function;
    return typeof fn?.name === 'string' ? [{ name: fn.name, arguments: fn.arguments }] : [];
  });
}
