import sharp from 'sharp';
import { ChatCompletionsClient, LlmError, type ChatRequest } from '../../lib/llm/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { VlmConfig } from '../config.js';
import { CircuitBreaker, type Clock } from './circuit-breaker.js';

/** What the model said about a suspected pattern. */
export interface VlmVerdict {
  confirmed: boolean;
  /** The model's own confidence, 0–1. */
  confidence: number;
  reasoning: string;
}

/** A verdict, or why there is none (error, time-out, open circuit): the pose result then stands. */
export type VlmOutcome = { kind: 'verdict'; verdict: VlmVerdict } | { kind: 'unavailable'; reason: string };

/** What the model is asked to confirm. */
export interface ConfirmationRequest {
  patternId: string;
  description: string;
  /** What the pose analysis saw, in words. */
  evidence: string;
  /** The valid frames' original bytes, in order. */
  frames: Buffer[];
}

/** At most this many frames are sent, evenly spread over the sequence. */
const MAX_FRAMES_SENT = 8;

const SYSTEM_PROMPT =
  'You verify behaviour that a pose-analysis system suspects in a sequence of video frames of one person. Look at ' +
  'the frames in order and answer only with a JSON object: {"confirmed": true or false, "confidence": a number ' +
  'from 0 to 1, "reasoning": "one or two sentences"}.';

/** Why a call failed, for `vlm_reasoning` and the logs (never the answer body or a stack). */
class VlmFailure extends Error {}

function pick<T>(items: T[], max: number): T[] {
  if (items.length <= max) return items;
  return Array.from({ length: max }, (_, i) => items[Math.round((i * (items.length - 1)) / (max - 1))]);
}

/** Reads the verdict out of the model's text; the model may wrap its JSON in a code fence. */
function parseVerdict(content: string): VlmVerdict {
  const json = /\{[\s\S]*\}/.exec(content)?.[0];
  let parsed: { confirmed?: unknown; confidence?: unknown; reasoning?: unknown } | undefined;
  try {
    parsed = json ? JSON.parse(json) : undefined;
  } catch {
    parsed = undefined;
  }
  if (typeof parsed?.confirmed !== 'boolean') throw new VlmFailure('the model answer had no "confirmed" verdict');
  const confidence = Number(parsed.confidence);
  return {
    confirmed: parsed.confirmed,
    confidence: Number.isFinite(confidence) ? Math.min(1, Math.max(0, confidence)) : parsed.confirmed ? 1 : 0,
    reasoning: typeof parsed.reasoning === 'string' && parsed.reasoning ? parsed.reasoning : 'no reasoning given',
  };
}

/**
 * Asks an OpenAI-compatible chat-completions endpoint (image inputs) to confirm a suspected pattern. Errors,
 * time-outs and unusable answers count against a circuit breaker; while it is open no call is made.
 */
export class VlmConfirmer {
  private readonly breaker: CircuitBreaker;
  private readonly client: ChatCompletionsClient;

  constructor(
    private readonly config: VlmConfig,
    private readonly logger: Logger,
    clock?: Clock,
  ) {
    this.breaker = new CircuitBreaker(config.breakerFailures, config.breakerOpenMs, clock);
    this.client = new ChatCompletionsClient(config);
  }

  /** The model name, for health. */
  get model(): string {
    return this.config.model;
  }

  /** The breaker's state, for health. */
  circuit(): 'closed' | 'open' | 'half-open' {
    return this.breaker.state();
  }

  /** Asks the model; never throws for the model's failures (they become `unavailable`). `signal`: the request's. */
  async confirm(request: ConfirmationRequest, requestId: string, signal?: AbortSignal): Promise<VlmOutcome> {
    if (!this.breaker.tryAcquire()) {
      const seconds = Math.ceil(this.breaker.retryInMs() / 1000);
      return {
        kind: 'unavailable',
        reason: `VLM skipped: circuit open after repeated failures (retry in ${seconds} s)`,
      };
    }
    try {
      const verdict = await this.call(request, signal);
      this.breaker.succeeded();
      return { kind: 'verdict', verdict };
    } catch (error) {
      if (signal?.aborted) {
        // The client left or the server stops: not the model's fault, and no sign of its health either.
        this.breaker.abandoned();
        throw signal.reason;
      }
      this.breaker.failed();
      const reason = error instanceof VlmFailure ? error.message : 'the VLM could not be reached';
      this.logger.warn('vlm confirmation failed', { requestId, reason, circuit: this.breaker.state() });
      return { kind: 'unavailable', reason: `VLM unavailable: ${reason}` };
    }
  }

  private async call(request: ConfirmationRequest, signal?: AbortSignal): Promise<VlmVerdict> {
    const side = this.config.imageMaxSide;
    const images = await Promise.all(
      pick(request.frames, MAX_FRAMES_SENT).map((bytes) =>
        sharp(bytes)
          .rotate()
          .resize(side, side, { fit: 'inside', withoutEnlargement: true })
          .jpeg({ quality: 80 })
          .toBuffer(),
      ),
    );
    const question: ChatRequest = {
      maxTokens: this.config.maxTokens,
      temperature: this.config.temperature,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text:
                `Suspected pattern "${request.patternId}": ${request.description}\n` +
                `Pose analysis: ${request.evidence}.\nDo the frames show this behaviour?`,
            },
            ...images.map((jpeg) => ({
              type: 'image_url' as const,
              image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}` },
            })),
          ],
        },
      ],
    };
    let content: string;
    try {
      content = await this.client.complete(question, signal);
    } catch (error) {
      throw error instanceof LlmError ? new VlmFailure(this.failureReason(error)) : error;
    }
    return parseVerdict(content);
  }

  /** Why the call failed, in the words `vlm_reasoning` has always used. */
  private failureReason(error: LlmError): string {
    switch (error.kind) {
      case 'status':
        return `the VLM answered HTTP ${error.status}`;
      case 'timeout':
        return `no answer within ${this.config.timeoutMs} ms`;
      case 'protocol':
        return 'the model answered without text';
      default:
        return 'the VLM could not be reached';
    }
  }
}
