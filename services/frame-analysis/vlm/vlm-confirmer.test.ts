import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { fixtureImage } from '../../../test/support/fixtures.js';
import { createLogger } from '../../lib/log/index.js';
import type { VlmConfig } from '../config.js';
import { startFakeChatCompletions, type FakeChatCompletions } from '../../../test/support/fake-chat-completions.js';
import { verdictAnswer } from '../testing/verdict-answer.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { VlmConfirmer, type ConfirmationRequest } from './vlm-confirmer.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });
let vlm: FakeChatCompletions;
let request: ConfirmationRequest;
let now = 0;
const clock = () => now;

function config(overrides: Partial<VlmConfig> = {}): VlmConfig {
  return {
    baseUrl: vlm.baseUrl,
    model: 'test-vlm',
    apiKey: 'sk-test',
    maxTokens: 123,
    temperature: 0.2,
    // Long enough never to fire on a loaded machine; only the hanging server's test uses a short one.
    timeoutMs: 60_000,
    imageMaxSide: 64,
    breakerFailures: 3,
    breakerOpenMs: 30_000,
    ...overrides,
  };
}

beforeAll(async () => {
  vlm = await startFakeChatCompletions(verdictAnswer({ confirmed: true, confidence: 0.8, reasoning: 'ok' }));
  const photo = await readFile(fixtureImage('astronaut.png'));
  request = { patternId: 'raised_arms', description: 'Both wrists above the nose', evidence: 'seen', frames: [photo] };
});
afterAll(() => vlm.close());
beforeEach(() => {
  vlm.requests.length = 0;
  now = 0;
});

describe('VlmConfirmer against an OpenAI-compatible server', () => {
  it('sends the frames as downscaled JPEG data URLs with the configured model, tokens, temperature and key', async () => {
    vlm.behaviour = verdictAnswer({ confirmed: true, confidence: 0.9, reasoning: 'arms are up' });
    const outcome = await new VlmConfirmer(config(), logger, clock).confirm(request, 'r1');
    expect(outcome).toEqual({
      kind: 'verdict',
      verdict: { confirmed: true, confidence: 0.9, reasoning: 'arms are up' },
    });
    const [{ body, authorization }] = vlm.requests;
    expect(authorization).toBe('Bearer sk-test');
    expect(body).toMatchObject({ model: 'test-vlm', max_tokens: 123, temperature: 0.2 });
    const parts = body.messages[1].content;
    expect(parts[0].text).toContain('raised_arms');
    const url: string = parts[1].image_url.url;
    expect(url.startsWith('data:image/jpeg;base64,')).toBe(true);
    const meta = await sharp(Buffer.from(url.split(',')[1], 'base64')).metadata();
    expect(Math.max(meta.width!, meta.height!)).toBe(64);
  });

  it('reads a verdict wrapped in a code fence, and a rejection', async () => {
    vlm.behaviour = verdictAnswer({ confirmed: false, confidence: 0.7, reasoning: 'stretching' }, { fenced: true });
    const outcome = await new VlmConfirmer(config(), logger, clock).confirm(request, 'r2');
    expect(outcome).toEqual({
      kind: 'verdict',
      verdict: { confirmed: false, confidence: 0.7, reasoning: 'stretching' },
    });
  });

  it('turns an HTTP error, a time-out and an unusable answer into "unavailable" with the reason', async () => {
    const confirmer = new VlmConfirmer(config({ breakerFailures: 10 }), logger, clock);
    vlm.behaviour = { kind: 'status', status: 500 };
    expect(await confirmer.confirm(request, 'r3')).toEqual({
      kind: 'unavailable',
      reason: 'VLM unavailable: the VLM answered HTTP 500',
    });
    vlm.behaviour = { kind: 'hang' };
    const impatient = new VlmConfirmer(config({ timeoutMs: 200 }), logger, clock);
    expect(await impatient.confirm(request, 'r4')).toEqual({
      kind: 'unavailable',
      reason: 'VLM unavailable: no answer within 200 ms',
    });
    vlm.behaviour = { kind: 'content', content: 'I think so.' };
    expect(await confirmer.confirm(request, 'r5')).toEqual({
      kind: 'unavailable',
      reason: 'VLM unavailable: the model answer had no "confirmed" verdict',
    });
  });

  it('opens the circuit after 3 consecutive failures for 30 s, then lets one trial through', async () => {
    const confirmer = new VlmConfirmer(config(), logger, clock);
    vlm.behaviour = { kind: 'status', status: 503 };
    for (let i = 0; i < 3; i++) await confirmer.confirm(request, `f${i}`);
    expect(vlm.requests).toHaveLength(3);
    expect(confirmer.circuit()).toBe('open');
    const skipped = await confirmer.confirm(request, 'skipped');
    expect(skipped).toEqual({
      kind: 'unavailable',
      reason: 'VLM skipped: circuit open after repeated failures (retry in 30 s)',
    });
    expect(vlm.requests).toHaveLength(3);
    now = 29_999;
    expect(confirmer.circuit()).toBe('open');
    now = 30_000;
    expect(confirmer.circuit()).toBe('half-open');
    vlm.behaviour = verdictAnswer({ confirmed: true, confidence: 1, reasoning: 'back' });
    expect((await confirmer.confirm(request, 'trial')).kind).toBe('verdict');
    expect(vlm.requests).toHaveLength(4);
    expect(confirmer.circuit()).toBe('closed');
  });

  it('does not count a success between failures towards opening', async () => {
    const confirmer = new VlmConfirmer(config(), logger, clock);
    for (const behaviour of ['fail', 'fail', 'ok', 'fail', 'fail'] as const) {
      vlm.behaviour =
        behaviour === 'ok'
          ? verdictAnswer({ confirmed: true, confidence: 1, reasoning: 'ok' })
          : { kind: 'status', status: 500 };
      await confirmer.confirm(request, behaviour);
    }
    expect(confirmer.circuit()).toBe('closed');
  });

  it('rethrows the request signal when the client leaves, without counting a failure', async () => {
    const confirmer = new VlmConfirmer(config({ breakerFailures: 1 }), logger, clock);
    vlm.behaviour = { kind: 'hang' };
    const controller = new AbortController();
    const pending = confirmer.confirm(request, 'gone', controller.signal);
    await vlm.waitForRequests(1);
    controller.abort(new Error('client gone'));
    await expect(pending).rejects.toThrow('client gone');
    expect(confirmer.circuit()).toBe('closed');
  });
});

describe('CircuitBreaker', () => {
  it('re-opens at once when the half-open trial fails, and lets only one trial run at a time', () => {
    let t = 0;
    const breaker = new CircuitBreaker(3, 1000, () => t);
    breaker.failed();
    breaker.failed();
    expect(breaker.tryAcquire()).toBe(true);
    breaker.failed();
    expect(breaker.tryAcquire()).toBe(false);
    t = 1000;
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.tryAcquire()).toBe(false); // the trial is still running
    breaker.failed();
    expect(breaker.state()).toBe('open');
    expect(breaker.retryInMs()).toBe(1000);
  });
});
