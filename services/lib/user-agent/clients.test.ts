import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChatCompletionsClient } from '../llm/index.js';
import { outboundRequest, UNRESTRICTED } from '../outbound/index.js';
import { S3ObjectStore } from '../storage/s3-store.js';
import { connectWeaviate } from '../vectors/index.js';
import { processUserAgent, setProcessComponent, userAgent } from './index.js';

/** A loopback server that records each request's path and User-Agent, answering JSON (or the LLM's answer). */
async function recordingServer() {
  const seen: { path: string; userAgent?: string }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', userAgent: req.headers['user-agent'] });
    const body = req.url?.endsWith('/chat/completions')
      ? { choices: [{ message: { role: 'assistant', content: 'ok' } }] }
      : { version: '1.30.0' };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('the User-Agent of Argus requests', () => {
  let recorder: Awaited<ReturnType<typeof recordingServer>>;
  beforeAll(async () => {
    recorder = await recordingServer();
  });
  afterAll(async () => {
    recorder.server.closeAllConnections();
    await new Promise((resolve) => recorder.server.close(resolve));
  });

  it('is argus-<component>/<version>, argus/<version> until the process names its component', () => {
    expect(userAgent('operator')).toMatch(/^argus-operator\/\d+\.\d+\.\d+/);
    expect(processUserAgent()).toMatch(/^argus\/\d+\.\d+\.\d+/);
    setProcessComponent('dataprep');
    expect(processUserAgent()).toBe(userAgent('dataprep'));
  });

  it('names the process on outbound requests, S3, Weaviate and the LLM client, a caller-set one kept', async () => {
    setProcessComponent('dataprep');
    const expected = userAgent('dataprep');
    const outbound = { policy: UNRESTRICTED, timeoutMs: 5000 };
    (await outboundRequest(`${recorder.url}/hook`, outbound)).discard();
    (
      await outboundRequest(`${recorder.url}/own`, { ...outbound, headers: { 'User-Agent': 'their-client/1' } })
    ).discard();
    const store = new S3ObjectStore({
      endpoint: recorder.url,
      region: 'us-east-1',
      accessKeyId: 'id',
      secretAccessKey: 'secret',
      forcePathStyle: true,
      checksumWhenRequired: true,
    });
    // The answer is not what S3 says; only the request matters here.
    await store.bucketExists('media').catch(() => undefined);
    await store.close();
    const weaviate = await connectWeaviate({ url: recorder.url, grpcUrl: 'http://127.0.0.1:1' }).catch(() => undefined);
    await weaviate?.close();
    await new ChatCompletionsClient({ baseUrl: recorder.url, model: 'm', timeoutMs: 5000 }).complete({
      messages: [{ role: 'user', content: 'hi' }],
    });

    const agent = (match: (path: string) => boolean) => recorder.seen.find((r) => match(r.path))?.userAgent;
    expect(agent((p) => p === '/hook')).toBe(expected);
    expect(agent((p) => p === '/own')).toBe('their-client/1');
    // The SDK keeps its own tokens and appends ours.
    expect(agent((p) => p.startsWith('/media'))).toContain(expected);
    expect(agent((p) => p.startsWith('/v1/'))).toBe(expected);
    expect(agent((p) => p.endsWith('/chat/completions'))).toBe(expected);
  });
});
