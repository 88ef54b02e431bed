import { describe, expect, it } from '@jest/globals';
import { RequestValidationError, validatePart } from '../../lib/http/index.js';
import { fastActionRequest } from './fast-action-request.js';
import { actionRequestSchema } from './schemas.js';

/** What the route would answer without the shortcut: the schema's value, or the validation error. */
function viaSchema(body: unknown): { value?: unknown; error?: RequestValidationError } {
  try {
    return { value: validatePart('body', actionRequestSchema, body) };
  } catch (err) {
    if (err instanceof RequestValidationError) return { error: err };
    throw err;
  }
}

const ABSENT = Symbol('absent');

/** Candidate values per field: valid, at the limits, just past them, of the wrong type, and absent. */
const CANDIDATES: Record<string, unknown[]> = {
  event_id: [ABSENT, 'evt-1', '', 'e'.repeat(256), 'e'.repeat(257), 7, null],
  source_id: ['cam-1', ABSENT, '', 's'.repeat(256), 's'.repeat(257), 'kamera ü', 12, null, ['cam']],
  alert_name: ['intrusion', ABSENT, '', 'a'.repeat(256), 'a'.repeat(257), '  padded  ', false],
  answer: [ABSENT, 'YES', 'NO', 'yes', 'No', 'maybe', '', 1, null],
  reason: [ABSENT, '', 'a person at the gate', 'r'.repeat(10_000), 'r'.repeat(10_001), 5, null],
  consecutive_count: [ABSENT, 1, 3, 0, -1, 1.5, '3', 2 ** 53 - 1, 2 ** 53, 1e21, true, null],
  escalated: [ABSENT, true, false, 'true', 0, null],
  tools: [
    ABSENT,
    [],
    ['log_alert'],
    ['log_alert', 'trigger_webhook', 'log_alert'],
    ['files__read_file', 'srv:tool.v2-x'],
    ['bad name'],
    [''],
    ['t'.repeat(128)],
    ['t'.repeat(129)],
    Array(64).fill('t'),
    Array(65).fill('t'),
    'log_alert',
    [1],
    [null],
    null,
  ],
  payloads: [ABSENT, [], [{ kind: 'text', data_text: 'hi' }], [{ kind: 'image' }], null, 'x'],
  metadata: [ABSENT, {}, { zone: 'north', nested: { list: [1, 2], deep: { x: null } } }, [], null, 'zone'],
  timestamp: [ABSENT, ABSENT, ABSENT, '2024-05-01T10:00:00+02:00', 'yesterday'],
  unknown_field: [ABSENT, ABSENT, ABSENT, ABSENT, 'refused by the schema', { nested: true }],
};

/** Deterministic pseudo-random numbers (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A body as it arrives over HTTP (through JSON), each field drawn from its candidates, the first one favoured. */
function drawBody(next: () => number): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [field, values] of Object.entries(CANDIDATES)) {
    const value = next() < 0.7 ? values[0] : values[Math.floor(next() * values.length)];
    if (value !== ABSENT) body[field] = value;
  }
  return JSON.parse(JSON.stringify(body));
}

describe('fastActionRequest (the fast body path of POST /actions/execute)', () => {
  it('returns exactly what actionRequestSchema returns whenever it returns anything', () => {
    const next = random(20261122);
    let taken = 0;
    let refusedValid = 0;
    for (let i = 0; i < 10_000; i++) {
      const body = drawBody(next);
      const fast = fastActionRequest(structuredClone(body));
      const schema = viaSchema(structuredClone(body));
      if (fast === undefined) {
        if (!schema.error) refusedValid++;
        continue;
      }
      taken++;
      if (schema.error)
        throw new Error(`accepted ${JSON.stringify(body)}, which the schema rejects: ${schema.error.message}`);
      expect(fast).toStrictEqual(schema.value);
    }
    // Not vacuous: both outcomes occur many times in the draw.
    expect(taken).toBeGreaterThan(500);
    expect(refusedValid).toBeGreaterThan(250);
  });

  it('takes the common shapes, with the schema defaults applied', () => {
    expect(fastActionRequest({ source_id: 'cam-1', alert_name: 'intrusion', tools: ['log_alert'] })).toStrictEqual({
      source_id: 'cam-1',
      alert_name: 'intrusion',
      answer: 'YES',
      reason: '',
      consecutive_count: 1,
      escalated: false,
      payloads: [],
      tools: ['log_alert'],
    });
    const full = {
      event_id: 'evt-9',
      source_id: 'cam-2',
      alert_name: 'loitering',
      answer: 'NO',
      reason: 'a shadow',
      consecutive_count: 4,
      escalated: true,
      tools: ['log_alert', 'publish_mqtt'],
      payloads: [],
      metadata: { zone: 'gate' },
    };
    expect(fastActionRequest(full)).toStrictEqual(full);
  });

  it('leaves payload data, timestamps, lower-case answers and unknown fields to the schema', () => {
    const base = { source_id: 'cam-1', alert_name: 'intrusion' };
    expect(fastActionRequest({ ...base, payloads: [{ kind: 'text', data_text: 'hi' }] })).toBeUndefined();
    expect(fastActionRequest({ ...base, timestamp: '2024-05-01T10:00:00+02:00' })).toBeUndefined();
    expect(fastActionRequest({ ...base, answer: 'yes' })).toBeUndefined();
    expect(fastActionRequest({ ...base, camera: 'north' })).toBeUndefined();
    // One rule for unknown fields: the schema refuses them too (the fast path never accepts what it refuses).
    expect(viaSchema({ ...base, camera: 'north' }).error?.issues).toEqual([
      { loc: ['body', 'camera'], msg: 'camera is not allowed', type: 'object.unknown' },
    ]);
    expect(fastActionRequest([base])).toBeUndefined();
  });

  it('copies the arrays and objects it keeps, so the caller’s body is never shared', () => {
    const body = { source_id: 'cam-1', alert_name: 'intrusion', tools: ['log_alert'], metadata: { zone: 'a' } };
    const request = fastActionRequest(body)!;
    expect(request.tools).not.toBe(body.tools);
    expect(request.metadata).not.toBe(body.metadata);
  });
});
