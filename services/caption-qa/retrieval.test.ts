import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OFFLINE_LABEL } from './answer/offline-answer.js';
import {
  parseEventStream,
  postJson,
  realEmbedders,
  serveQa,
  type QaModels,
  type ServedQa,
} from './testing/serve-app.js';

let models: QaModels;
let qa: ServedQa;
/** Tuesday 2026-03-10 15:30 UTC: the service's "now". */
const NOW = Date.UTC(2026, 2, 10, 15, 30);
const at = (hhmmss: string, day = '2026-03-10') => Date.parse(`${day}T${hhmmss}Z`);

/** What the cameras saw, at known times. */
const CAPTIONS = [
  { camera: 'front-door', time: at('15:25:00'), text: 'A delivery driver leaves a parcel at the front door' },
  { camera: 'front-door', time: at('15:26:00'), text: 'A delivery driver leaves a parcel at the front door' },
  { camera: 'front-door', time: at('15:26:30'), text: 'A delivery driver leaves a parcel by the front door' },
  { camera: 'parking', time: at('15:27:00'), text: 'A red car parks in the parking lot' },
  { camera: 'parking', time: at('14:05:00'), text: 'A man walks a dog across the parking lot' },
  { camera: 'front-door', time: at('14:04:00'), text: 'A woman in a yellow coat rings the doorbell' },
  { camera: 'lobby', time: at('10:00:00', '2026-03-09'), text: 'A cleaner mops the lobby floor' },
  { camera: 'parking', time: at('09:00:00'), text: 'A white van unloads boxes' },
];

/** Asks a question; returns the stream's events by name (sources, the answer text, done). */
async function ask(input: string) {
  const response = await postJson(`${qa.api}/chat`, { input });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const events = parseEventStream(await response.text()).filter((e) => 'event' in e) as Array<{
    event: string;
    data: any;
  }>;
  return {
    names: events.map((e) => e.event),
    sources: events.find((e) => e.event === 'sources')!.data as any[],
    answer: events
      .filter((e) => e.event === 'token')
      .map((e) => e.data.text)
      .join(''),
    done: events.find((e) => e.event === 'done')?.data,
  };
}

/** The sources' texts, sorted; the near-duplicate delivery captions read as one (either wording may represent them). */
const texts = (sources: any[]) => sources.map((s) => String(s.text).replace(' by the front', ' at the front')).sort();

beforeAll(async () => {
  models = await realEmbedders();
  qa = await serveQa(models, { clock: () => NOW });
  for (const c of CAPTIONS) {
    const response = await postJson(`${qa.api}/embeddings`, {
      image_data: 'none',
      metadata: { result: c.text, timestamp: c.time, camera: c.camera },
    });
    expect(response.status).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await qa.close();
  await models.release();
});

describe('retrieval for questions about live video', () => {
  it('"in the last 10 minutes" keeps only captions of those minutes, duplicates collapsed into one span', async () => {
    const { sources } = await ask('What happened in the last 10 minutes?');
    expect(texts(sources)).toEqual([
      'A delivery driver leaves a parcel at the front door',
      'A red car parks in the parking lot',
    ]);
    const delivery = sources.find((s) => s.camera === 'front-door');
    expect(delivery).toMatchObject({
      count: 3,
      time: '2026-03-10T15:25:00.000Z',
      time_end: '2026-03-10T15:26:30.000Z',
      frame_url: null,
    });
  });

  it('"at 14:05" looks around that time only', async () => {
    const { sources } = await ask('Who rang the doorbell at 14:05?');
    expect(texts(sources)).toEqual([
      'A man walks a dog across the parking lot',
      'A woman in a yellow coat rings the doorbell',
    ]);
    expect(sources[0].text).toBe('A woman in a yellow coat rings the doorbell');
  });

  it('"since 14:00" and "yesterday" select their spans', async () => {
    expect(texts((await ask('Anything unusual since 14:00?')).sources)).toEqual([
      'A delivery driver leaves a parcel at the front door',
      'A man walks a dog across the parking lot',
      'A red car parks in the parking lot',
      'A woman in a yellow coat rings the doorbell',
    ]);
    expect(texts((await ask('What was seen yesterday?')).sources)).toEqual(['A cleaner mops the lobby floor']);
  });

  it('a camera named in the question filters by it', async () => {
    const { sources } = await ask('What did the parking camera see?');
    expect(new Set(sources.map((s) => s.camera))).toEqual(new Set(['parking']));
    expect(texts(sources)).toEqual([
      'A man walks a dog across the parking lot',
      'A red car parks in the parking lot',
      'A white van unloads boxes',
    ]);
  });

  it('combines a camera and a time window', async () => {
    const { sources } = await ask('What happened at the front door in the last hour?');
    expect(texts(sources)).toEqual(['A delivery driver leaves a parcel at the front door']);
  });

  it('without filters ranks by similarity and drops captions under the score floor', async () => {
    const { sources } = await ask('Was a parcel delivered?');
    expect(sources[0]).toMatchObject({ text: expect.stringMatching(/^A delivery driver leaves a parcel/), count: 3 });
    expect(sources.every((s) => s.score >= 0.2)).toBe(true);
    expect(texts(sources)).not.toContain('A cleaner mops the lobby floor');
  });
});

describe('the offline answerer', () => {
  it('labels its answer, lists the captions newest first for recency questions, then done', async () => {
    const { names, answer, done } = await ask('What happened in the last 10 minutes?');
    expect(names[0]).toBe('sources');
    expect(names[names.length - 1]).toBe('done');
    expect(done).toEqual({ answerer: 'offline', model: 'offline-caption-answerer' });
    expect(answer.split('\n').filter(Boolean)).toEqual([
      `${OFFLINE_LABEL}: the captions that best match the question (in the last 10 minutes), newest first:`,
      expect.stringMatching(/^\[\d\] 2026-03-10 15:27:00 \(camera parking\): A red car parks in the parking lot$/),
      expect.stringMatching(
        /^\[\d\] 2026-03-10 15:25:00–15:26:30 \(camera front-door\): A delivery driver leaves a parcel (at|by) the front door \(3 similar captions\)$/,
      ),
    ]);
  });

  it('says so honestly when nothing matches', async () => {
    const { sources, answer } = await ask('What happened between 03:00 and 04:00?');
    expect(sources).toEqual([]);
    expect(answer).toBe(`${OFFLINE_LABEL}: no stored caption matches the question (between 03:00 and 04:00).`);
  });
});

describe('POST /api/chat validation', () => {
  it.each([
    ['missing', {}],
    ['empty', { input: '' }],
    ['whitespace', { input: '  \n ' }],
    ['not a string', { input: 5 }],
  ])('answers 422 with the contract detail when input is %s', async (_what, body) => {
    const response = await postJson(`${qa.api}/chat`, body);
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ detail: 'Input question is required and cannot be empty' });
  });

  it('answers 422 for a question over the length limit and for a body that is not an object', async () => {
    const long = await postJson(`${qa.api}/chat`, { input: 'x'.repeat(301) });
    expect(long.status).toBe(422);
    expect(await long.json()).toEqual({ detail: 'The input question is over 300 characters' });
    const list = await postJson(`${qa.api}/chat`, ['what']);
    expect(list.status).toBe(422);
    expect(await list.json()).toEqual({ detail: 'The request body must be a JSON object' });
  });
});
