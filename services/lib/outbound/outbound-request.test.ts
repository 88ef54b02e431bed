import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { watchAbortListeners } from '../../../test/support/abort-listeners.js';
import {
  AllowList,
  nonPublicKind,
  OutboundError,
  outboundRequest,
  type OutboundPolicy,
  type OutboundRequestOptions,
  type Resolver,
} from './index.js';

/** A loopback server that counts connections and answers by path. */
interface TestServer {
  url: string;
  port: number;
  connections: number;
  hosts: string[];
  close(): Promise<void>;
}

async function startServer(host: string, routes: Record<string, http.RequestListener> = {}): Promise<TestServer> {
  const state = { connections: 0, hosts: [] as string[] };
  const server = http.createServer((req, res) => {
    state.hosts.push(req.headers.host ?? '');
    const route = routes[req.url ?? '/'];
    if (route) route(req, res);
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    get connections() {
      return state.connections;
    },
    hosts: state.hosts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const policy = (allow: string, publicAddresses = true): OutboundPolicy => ({
  allow: AllowList.parse(allow),
  publicAddresses,
  setting: 'TEST_ALLOW',
});

/** A resolver from a fixed table that records every call. */
function tableResolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: (address.includes(':') ? 6 : 4) as 4 | 6 }));
  };
  return Object.assign(resolve, { calls });
}

async function failureOf(url: string, options: OutboundRequestOptions): Promise<OutboundError> {
  try {
    const response = await outboundRequest(url, options);
    await response.bytes();
  } catch (error) {
    if (error instanceof OutboundError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

describe('outbound guard (loopback servers only)', () => {
  let allowed: TestServer;
  let refusedV4: TestServer;
  let refusedV6: TestServer;
  const loopbackOnly = policy('127.0.0.1/32');

  beforeAll(async () => {
    refusedV4 = await startServer('127.0.0.2');
    refusedV6 = await startServer('::1');
    allowed = await startServer('127.0.0.1', {
      '/to-refused': (_req, res) => res.writeHead(302, { location: `${refusedV4.url}/` }).end(),
      '/to-self': (_req, res) => res.writeHead(302, { location: '/' }).end(),
      '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
      '/to-garbage': (_req, res) => res.writeHead(302, { location: 'http://[not-an-address' }).end(),
      '/big': (_req, res) => res.writeHead(200).end(Buffer.alloc(4096, 1)),
      '/declared-big': (_req, res) => {
        res.writeHead(200, { 'content-length': '4096' });
        res.write(Buffer.alloc(10)); // the declared length alone must refuse it
      },
      '/silent': () => undefined,
      '/post': (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => res.writeHead(201).end(`${req.method} ${Buffer.concat(chunks).toString()}`));
      },
    });
  });
  afterAll(async () => {
    await Promise.all([allowed, refusedV4, refusedV6].map((s) => s.close()));
  });

  it('reaches an allow-listed address and reads the body', async () => {
    const response = await outboundRequest(`${allowed.url}/`, { policy: loopbackOnly, timeoutMs: 5000 });
    expect(response.status).toBe(200);
    expect((await response.bytes()).toString()).toBe('hello');
    const posted = await outboundRequest(`${allowed.url}/post`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
      method: 'POST',
      body: '{"a":1}',
    });
    expect((await posted.bytes()).toString()).toBe('POST {"a":1}');
  });

  it('refuses 127.0.0.2, ::1 and IPv4-mapped loopback outside the allow-list, connecting nowhere', async () => {
    const before = [refusedV4.connections, refusedV6.connections];
    const v4 = await failureOf(`${refusedV4.url}/`, { policy: loopbackOnly, timeoutMs: 5000 });
    expect(v4).toMatchObject({
      failure: 'refused',
      message: 'refused: 127.0.0.2 is a loopback address not in TEST_ALLOW',
    });
    const v6 = await failureOf(`${refusedV6.url}/`, { policy: loopbackOnly, timeoutMs: 5000 });
    expect(v6.message).toBe('refused: ::1 is a loopback address not in TEST_ALLOW');
    const mapped = await failureOf(`http://[::ffff:127.0.0.2]:${refusedV4.port}/`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
    });
    expect(mapped.message).toMatch(/^refused: ::ffff:7f00:2 is a loopback address/);
    expect([refusedV4.connections, refusedV6.connections]).toEqual(before);
  });

  it('checks every redirect target: an allowed server cannot send the request to a refused one', async () => {
    const before = refusedV4.connections;
    const error = await failureOf(`${allowed.url}/to-refused`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
      maxRedirects: 3,
    });
    expect(error.message).toBe('refused: 127.0.0.2 is a loopback address not in TEST_ALLOW');
    expect(refusedV4.connections).toBe(before);
    const followed = await outboundRequest(`${allowed.url}/to-self`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
      maxRedirects: 1,
    });
    expect([followed.status, followed.url.pathname]).toEqual([200, '/']);
    followed.discard();
    const loop = await failureOf(`${allowed.url}/loop`, { policy: loopbackOnly, timeoutMs: 5000, maxRedirects: 2 });
    expect(loop).toMatchObject({ failure: 'redirects', message: 'redirected more than 2 times' });
    const garbage = await failureOf(`${allowed.url}/to-garbage`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
      maxRedirects: 2,
    });
    expect(garbage).toMatchObject({ failure: 'invalid-url', message: 'redirect target is not a valid URL' });
    const unfollowed = await outboundRequest(`${allowed.url}/to-refused`, { policy: loopbackOnly, timeoutMs: 5000 });
    expect(unfollowed.status).toBe(302); // no redirects asked for: the 3xx is the caller's to judge
    unfollowed.discard();
  });

  it('refuses a host name that resolves to a refused address, and one that mixes allowed and refused ones', async () => {
    const before = refusedV4.connections;
    const resolve = tableResolver({ 'camera.test': ['127.0.0.2'], 'mixed.test': ['127.0.0.1', '127.0.0.2'] });
    const named = await failureOf(`http://camera.test:${refusedV4.port}/`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
      resolve,
    });
    expect(named.message).toBe('refused: camera.test resolves to 127.0.0.2, a loopback address not in TEST_ALLOW');
    const mixed = await failureOf(`http://mixed.test:${allowed.port}/`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
      resolve,
    });
    expect(mixed.message).toMatch(/^refused: mixed.test resolves to 127.0.0.2/);
    // The system resolver: localhost is loopback, refused by default.
    const localhost = await failureOf(`http://localhost:${allowed.port}/`, { policy: policy(''), timeoutMs: 5000 });
    expect(localhost.message).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(refusedV4.connections).toBe(before);
  });

  it('resolves once and connects to the address it checked, with the URL host in Host', async () => {
    // A rebinding resolver: a second lookup would answer a refused address.
    let answers = 0;
    const rebinding: Resolver = async () => [{ address: answers++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const response = await outboundRequest(`http://camera.test:${allowed.port}/`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
      resolve: rebinding,
    });
    expect((await response.bytes()).toString()).toBe('hello');
    expect(answers).toBe(1);
    expect(allowed.hosts.at(-1)).toBe(`camera.test:${allowed.port}`);
    // Allowed by name: whatever the name resolves to.
    const byName = await outboundRequest(`http://cam.cameras.test:${refusedV4.port}/`, {
      policy: policy('*.cameras.test'),
      timeoutMs: 5000,
      resolve: tableResolver({ 'cam.cameras.test': ['127.0.0.2'] }),
    });
    expect(byName.status).toBe(200);
    byName.discard();
  });

  it('says why on DNS failure, time-out, oversized answers and refused connections', async () => {
    const dns = await failureOf('http://nowhere.test/', {
      policy: loopbackOnly,
      timeoutMs: 5000,
      resolve: tableResolver({}),
    });
    expect(dns).toMatchObject({ failure: 'dns', message: 'DNS lookup of nowhere.test failed (ENOTFOUND)' });
    const slow = await failureOf(`${allowed.url}/silent`, { policy: loopbackOnly, timeoutMs: 200 });
    expect(slow).toMatchObject({ failure: 'timeout', message: 'timed out after 0.2 s' });
    const big = await failureOf(`${allowed.url}/big`, { policy: loopbackOnly, timeoutMs: 5000, maxBytes: 1000 });
    expect(big).toMatchObject({ failure: 'too-large', message: 'answer larger than 1000 bytes' });
    const declared = await failureOf(`${allowed.url}/declared-big`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
      maxBytes: 1000,
    });
    expect(declared.failure).toBe('too-large');
    const closed = await startServer('127.0.0.1');
    const port = closed.port;
    await closed.close();
    const refusedConnection = await failureOf(`http://127.0.0.1:${port}/`, { policy: loopbackOnly, timeoutMs: 5000 });
    expect(refusedConnection).toMatchObject({
      failure: 'connect',
      message: `connection to 127.0.0.1:${port} failed (ECONNREFUSED)`,
    });
    const scheme = await failureOf('file:///etc/passwd', { policy: loopbackOnly, timeoutMs: 5000 });
    expect(scheme).toMatchObject({ failure: 'invalid-url', message: 'URL must use http or https' });
  });

  it("ends with the caller's abort reason", async () => {
    const controller = new AbortController();
    const pending = outboundRequest(`${allowed.url}/silent`, {
      policy: loopbackOnly,
      timeoutMs: 5000,
      signal: controller.signal,
    });
    controller.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
  });

  it('links 200 concurrent exchanges to one shared signal through a single listener, answered or refused', async () => {
    const closed = await startServer('127.0.0.1');
    await closed.close();
    const shared = new AbortController();
    const watch = watchAbortListeners(shared.signal);
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const target = i % 2 === 0 ? `${allowed.url}/` : `http://127.0.0.1:${closed.port}/`;
        try {
          const response = await outboundRequest(target, {
            policy: loopbackOnly,
            timeoutMs: 30_000,
            signal: shared.signal,
          });
          return (await response.bytes()).toString();
        } catch (error) {
          return (error as OutboundError).failure;
        }
      }),
    );
    watch.stop();
    expect(new Set(outcomes)).toEqual(new Set(['hello', 'connect']));
    expect({ peak: watch.peak, warned: watch.warned(), now: watch.current() }).toEqual({
      peak: 1,
      warned: false,
      now: 0,
    });
  });
});

describe('address kinds and allow-lists', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['127.0.0.2', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['::ffff:192.168.0.1', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(nonPublicKind(address) ?? 'public').toBe(kind);
  });

  it('parses CIDRs, single addresses and host names, and names a bad entry', () => {
    const list = AllowList.parse(' 10.0.0.0/8, fd00::/8 ,192.168.1.7, Camera-1.LAN., *.cams.internal');
    expect(list.hasAddress('10.9.9.9')).toBe(true);
    expect(list.hasAddress('::ffff:10.9.9.9')).toBe(true);
    expect(list.hasAddress('fd12::1')).toBe(true);
    expect(list.hasAddress('192.168.1.7')).toBe(true);
    expect(list.hasAddress('192.168.1.8')).toBe(false);
    expect(list.hasHost('camera-1.lan')).toBe(true);
    expect(list.hasHost('a.b.cams.internal')).toBe(true);
    expect(list.hasHost('cams.internal')).toBe(false);
    expect(list.hasHost('evilcams.internal')).toBe(false);
    expect(() => AllowList.parse('10.0.0.0/33')).toThrow('"10.0.0.0/33" is not a valid CIDR');
    expect(() => AllowList.parse('host/8')).toThrow('"host/8" is neither a CIDR, an IP address nor a host name');
    expect(() => AllowList.parse('bad_name')).toThrow('"bad_name" is neither');
    expect(AllowList.parse('').entries).toEqual([]);
  });

  it('refuses public addresses when the policy opens only the allow-list', async () => {
    // No traffic: the refusal comes from the resolver's answer, before any socket exists.
    const error = await failureOf('http://hooks.test/', {
      policy: policy('127.0.0.1/32', false),
      timeoutMs: 5000,
      resolve: tableResolver({ 'hooks.test': ['8.8.8.8'] }),
    });
    expect(error.message).toBe('refused: hooks.test resolves to 8.8.8.8, not in TEST_ALLOW');
    const unspecified = await failureOf('http://0.0.0.0:9/', { policy: policy(''), timeoutMs: 5000 });
    expect(unspecified.message).toBe('refused: 0.0.0.0 is an unspecified address not in TEST_ALLOW');
  });
});
