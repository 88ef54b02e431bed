/**
 * API keys: (1) throughput of a small JSON route of the HTTP kit served with ARGUS_API_KEYS (three keys, the request
 * carrying the last) against the same app served without keys, in the same run, rounds alternated so that drift of the
 * machine falls on both alike; (2) the time of one key check for the right key, a wrong key of the same length, a
 * short wrong key, no header and another scheme, each as a ratio to the right key's (a constant-time check shows ~1
 * for every wrong token of a length an attacker can choose; only the presented token's own length is hashed).
 * Loopback only, bounded durations; the load generator shares the process (the ratio is what counts).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import Joi from 'joi';
import { ApiKeys } from '../services/lib/http/api-keys.js';
import { createHttpApp, defineRoute, detailStyle, listen, type RunningServer } from '../services/lib/http/index.js';
import { createLogger } from '../services/lib/log/index.js';

const KEYS = ['bench-key-one-0123456789abcdef', 'bench-key-two-0123456789abcdef', 'bench-key-three-0123456789abc'];
const CONNECTIONS = 16;
const ROUND_MS = 2000;
const ROUNDS = 3;
const CHECKS = 200_000;

const logger = createLogger({ service: 'api-keys-bench', level: 'warn', json: true });

function app() {
  return createHttpApp({
    info: { title: 'api keys bench', version: '1' },
    service: 'api-keys-bench',
    logger,
    errors: detailStyle(),
    basePath: '/api',
    routes: [
      defineRoute({
        method: 'get',
        path: '/things',
        summary: 'A small JSON answer',
        responses: { 200: { description: 'ok', schema: Joi.object({ ok: Joi.boolean() }) } },
        handler: (ctx) => {
          ctx.body = { ok: true };
        },
      }),
    ],
  }).app;
}

/** Requests answered 200 in `ms` with CONNECTIONS keep-alive connections each sending one after another. */
async function load(url: string, headers: Record<string, string>, ms: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const end = performance.now() + ms;
  let answered = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      http
        .get(url, { agent, headers }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) answered++;
            resolve();
          });
        })
        .on('error', reject);
    });
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) await one();
    }),
  );
  agent.destroy();
  return answered;
}

/** Mean microseconds of one check of `header`. */
function checkTime(keys: ApiKeys, header: string | undefined): number {
  for (let i = 0; i < 10_000; i++) keys.accepts(header);
  const start = performance.now();
  for (let i = 0; i < CHECKS; i++) keys.accepts(header);
  return ((performance.now() - start) * 1000) / CHECKS;
}

export default async function run(): Promise<void> {
  const servers: RunningServer[] = [];
  try {
    const open = await listen(app(), { port: 0, host: '127.0.0.1', logger, name: 'open' });
    servers.push(open);
    const keyed = await listen(app(), { port: 0, host: '127.0.0.1', logger, name: 'keyed', apiKeys: KEYS });
    servers.push(keyed);
    const auth = { authorization: `Bearer ${KEYS[2]}` };
    await load(`${open.url}/api/things`, {}, 300);
    await load(`${keyed.url}/api/things`, auth, 300);
    let openCount = 0;
    let keyedCount = 0;
    for (let round = 0; round < ROUNDS; round++) {
      openCount += await load(`${open.url}/api/things`, {}, ROUND_MS);
      keyedCount += await load(`${keyed.url}/api/things`, auth, ROUND_MS);
    }
    const seconds = (ROUNDS * ROUND_MS) / 1000;
    const openRate = openCount / seconds;
    const keyedRate = keyedCount / seconds;
    console.log(`GET /api/things, ${CONNECTIONS} connections, ${ROUNDS} alternated rounds of ${ROUND_MS} ms each:`);
    console.log(`  without keys (baseline): ${openRate.toFixed(0)} req/s`);
    console.log(
      `  with 3 keys, last sent:  ${keyedRate.toFixed(0)} req/s  (${(keyedRate / openRate).toFixed(3)} × baseline)`,
    );

    const keys = ApiKeys.of(KEYS)!;
    const right = checkTime(keys, `Bearer ${KEYS[2]}`);
    const cases: Array<[string, string | undefined]> = [
      ['wrong key, same length', `Bearer ${'x'.repeat(KEYS[2].length)}`],
      ['wrong key, 16 characters', `Bearer ${'x'.repeat(16)}`],
      ['no header', undefined],
      ['Basic scheme', 'Basic YXJndXM6bm90LWEta2V5'],
    ];
    console.log(`one key check (3 keys), mean of ${CHECKS}:`);
    console.log(`  right key (baseline): ${right.toFixed(2)} µs`);
    for (const [name, header] of cases) {
      const time = checkTime(keys, header);
      console.log(`  ${name}: ${time.toFixed(2)} µs  (${(time / right).toFixed(2)} × baseline)`);
    }
  } finally {
    for (const server of servers) await server.close();
  }
}
