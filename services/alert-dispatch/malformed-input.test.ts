import { serveDispatch } from './testing/serve-dispatch.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { nestedJson } from '../../test/support/hostile-bodies.js';
import { malformedSweep } from '../../test/support/malformed-sweep.js';
import type { RunningServer } from '../lib/http/index.js';
import { createLogger } from '../lib/log/index.js';
import { McpManager } from './mcp/mcp-manager.js';
import { SubscriptionStore } from './subscriptions/subscription-store.js';
import { logAlertTool } from './tools/log-alert.js';
import { ToolRegistry } from './tools/registry.js';
import { ALERT_DISPATCH_SWEEP, isDetailBody } from './testing/sweep-endpoints.js';

const logger = createLogger({ service: 'alert-dispatch-sweep', level: 'error', json: true });
logger.silent = true;

describe('alert-dispatch against malformed input', () => {
  let dir: string;
  let server: RunningServer;
  let mcp: McpManager;
  let api: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'alert-sweep-'));
    const subsFile = path.join(dir, 'subscriptions.yaml');
    await writeFile(subsFile, 'subscriptions:\n  - alert_name: intrusion\n    tools: [log_alert]\n');
    const subscriptions = new SubscriptionStore(subsFile, logger);
    await subscriptions.reload();
    mcp = new McpManager({ logger });
    await mcp.start();
    const registry = new ToolRegistry([logAlertTool()], mcp);
    const policy = { timeoutMs: 2000, maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 5 };
    ({ server } = await serveDispatch({
      logger,
      registry,
      subscriptions,
      policy,
      mcp,
      concurrency: 2,
      name: 'alert-dispatch-sweep',
    }));
    api = `${server.url}/api/v1`;
  });
  afterAll(async () => {
    await server.close();
    await mcp.close();
    await rm(dir, { recursive: true, force: true });
  });

  const post = (p: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(api + p, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: new Uint8Array(Buffer.from(body)),
    });

  it('answers every malformed request 4xx in {detail}, never 500, never a stack trace', async () => {
    const report = await malformedSweep({
      base: api,
      endpoints: ALERT_DISPATCH_SWEEP,
      errorShape: isDetailBody,
      health: [`${api}/health`],
    });
    expect(report.failures).toEqual([]);
    expect(report.cases).toBeGreaterThan(100);
  });

  it('decodes a valid gzip alert and answers an undecodable one 400 (was 500)', async () => {
    const alert = JSON.stringify({ alert_type: 'intrusion', source_id: 'cam-1' });
    expect((await post('/alerts', zlib.gzipSync(alert), { 'content-encoding': 'gzip' })).status).toBe(202);
    for (const p of ['/alerts', '/actions/execute']) {
      const res = await post(p, alert, { 'content-encoding': 'gzip' });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ detail: 'The body could not be decoded (Content-Encoding: gzip)' });
    }
  });

  it('refuses metadata nested 10,000 levels deep with 422 before dispatch, on /alerts and for log_alert', async () => {
    const deep = nestedJson(10_000);
    const alert = await post('/alerts', `{"alert_type":"intrusion","metadata":${deep}}`);
    const action = await post(
      '/actions/execute',
      `{"source_id":"cam-1","alert_name":"intrusion","tools":["log_alert"],"payloads":[{"kind":"text","encoding":"raw","data_text":"x","metadata":${deep}}]}`,
    );
    for (const res of [alert, action]) {
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({
        detail: 'body: JSON nested deeper than 32 levels',
        errors: [{ loc: ['body'], msg: 'JSON nested deeper than 32 levels', type: 'json.depth' }],
      });
    }
  });

  it('answers a wrong method 405 with Allow in {detail}', async () => {
    const res = await fetch(`${api}/alerts`, { method: 'GET' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toEqual({ detail: 'Method Not Allowed' });
  });
});
