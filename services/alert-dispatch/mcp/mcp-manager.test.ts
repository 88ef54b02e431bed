import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createHttpApp, detailStyle, listen, type RunningServer } from '../../lib/http/index.js';
import { QueueClosedError } from '../../lib/keyed-queue/index.js';
import { createLogger } from '../../lib/log/index.js';
import { McpCallError, McpConfigError, McpServerUnavailableError, McpToolNotFoundError } from './errors.js';
import { McpManager } from './mcp-manager.js';
import { mcpRoutes } from '../routes/mcp-routes.js';
import { reconnectDelay } from './server-connection.js';
import { qualifiedToolName } from './tool-names.js';

const logger = createLogger({ service: 'mcp-test', level: 'error', json: true });
const require = createRequire(import.meta.url);
const memoryBin = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')),
  'dist/index.js',
);

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}

function textOf(content: unknown): string {
  return (content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('');
}

describe('McpManager with the real memory server over stdio', () => {
  let dir: string;
  let configFile: string;
  let manager: McpManager;
  let server: RunningServer;
  const memoryServer = (name: string, file: string) => ({
    name,
    command: process.execPath,
    args: [memoryBin],
    env: { MEMORY_FILE_PATH: path.join(dir, file) },
  });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-manager-'));
    configFile = path.join(dir, 'mcp.yaml');
    // YAML on purpose: the loader reads JSON and YAML alike.
    await writeFile(
      configFile,
      `servers:\n  - name: memory\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(memoryBin)}]\n` +
        `    env: { MEMORY_FILE_PATH: ${JSON.stringify(path.join(dir, 'memory.jsonl'))} }\n` +
        `  - name: broken\n    command: ${JSON.stringify(path.join(dir, 'no-such-binary'))}\n`,
    );
    manager = new McpManager({ configFile, logger, reconnect: { initialMs: 100, maxMs: 400 } });
    await manager.start();
    const { app } = createHttpApp({
      info: { title: 'mcp', version: '1' },
      service: 'mcp',
      logger,
      errors: detailStyle(),
      routes: mcpRoutes(manager),
    });
    server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'mcp' });
  });

  afterAll(async () => {
    await server?.close();
    await manager?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const post = (p: string, body?: unknown) =>
    fetch(server.url + p, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('lists the server tools under <server>__<tool> names and reports a broken server as disconnected', async () => {
    const status = await (await fetch(`${server.url}/api/v1/mcp/status`)).json();
    expect(status.enabled).toBe(true);
    const memory = status.servers.find((s: any) => s.name === 'memory');
    expect(memory).toMatchObject({ connected: true, transport: 'stdio' });
    expect(memory.tool_count).toBeGreaterThanOrEqual(5);
    const broken = status.servers.find((s: any) => s.name === 'broken');
    expect(broken).toMatchObject({ connected: false, tool_count: 0 });
    expect(broken.last_error).toMatch(/ENOENT/);
    expect(status.total_tools).toBe(memory.tool_count);

    const list = await (await fetch(`${server.url}/api/v1/mcp/tools`)).json();
    expect(list.count).toBe(list.tools.length);
    const names = list.tools.map((t: any) => t.name);
    expect(names).toEqual(expect.arrayContaining(['memory__create_entities', 'memory__read_graph']));
    const create = list.tools.find((t: any) => t.name === 'memory__create_entities');
    expect(create).toMatchObject({ server: 'memory', tool: 'create_entities' });
    expect(create.description.length).toBeGreaterThan(0);
    expect(create.inputSchema.type).toBe('object');
  });

  it('invokes tools over HTTP: create_entities then read_graph sees them', async () => {
    const created = await post('/api/v1/mcp/tools/memory__create_entities/invoke', {
      arguments: { entities: [{ name: 'cam-7', entityType: 'camera', observations: ['north gate'] }] },
    });
    expect(created.status).toBe(200);
    const createdBody = await created.json();
    expect(createdBody).toMatchObject({
      name: 'memory__create_entities',
      server: 'memory',
      tool: 'create_entities',
      is_error: false,
    });

    const read = await post('/api/v1/mcp/tools/memory__read_graph/invoke', { arguments: {} });
    const readBody = await read.json();
    expect(read.status).toBe(200);
    expect(textOf(readBody.content)).toContain('north gate');
  });

  it('answers 404 for an unknown tool, is_error for arguments the server rejects, 422 for a bad body', async () => {
    const unknown = await post('/api/v1/mcp/tools/memory__nope/invoke', { arguments: {} });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ detail: 'Unknown MCP tool: memory__nope' });
    await expect(manager.invoke('nope', {})).rejects.toBeInstanceOf(McpToolNotFoundError);

    const invalid = await post('/api/v1/mcp/tools/memory__create_entities/invoke', { arguments: { entities: 'x' } });
    // The SDK server reports schema violations as a tool-level error result, not a protocol error.
    expect(invalid.status).toBe(200);
    const invalidBody = await invalid.json();
    expect(invalidBody.is_error).toBe(true);
    expect(textOf(invalidBody.content)).toMatch(/Invalid arguments/);

    const badBody = await post('/api/v1/mcp/tools/memory__read_graph/invoke', { arguments: 'x' });
    expect(badBody.status).toBe(422);
  });

  it('reports a killed server disconnected, answers 503 meanwhile, and reconnects it', async () => {
    const pid = manager.serverPid('memory');
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, 'SIGKILL');
    await until(() => manager.status().servers.find((s) => s.name === 'memory')!.connected === false);
    expect(manager.tools()).toHaveLength(0);
    const during = await post('/api/v1/mcp/tools/memory__read_graph/invoke', { arguments: {} });
    expect(during.status).toBe(503);
    expect(await during.json()).toEqual({ detail: 'MCP server memory is not connected' });
    await expect(manager.invoke('memory__read_graph', {})).rejects.toBeInstanceOf(McpServerUnavailableError);

    await until(() => manager.status().servers.find((s) => s.name === 'memory')!.connected);
    expect(manager.serverPid('memory')).not.toBe(pid);
    const again = await manager.invoke('memory__read_graph', {});
    expect(textOf(again.content)).toContain('north gate');
  });

  it('keeps the running configuration when the file becomes invalid, and applies a valid one on reload', async () => {
    const before = manager.status();
    await writeFile(configFile, 'servers:\n  - name: "bad name!"\n    url: not-a-url\n    command: x\n  - {}\n');
    const rejected = await post('/api/v1/mcp/reload');
    expect(rejected.status).toBe(422);
    const detail = (await rejected.json()).detail as string;
    expect(detail).toContain('servers[0].name');
    expect(detail).toContain('servers[1]');
    await expect(manager.reload()).rejects.toBeInstanceOf(McpConfigError);
    expect(manager.status().servers.map((s) => s.name)).toEqual(before.servers.map((s) => s.name));
    expect(manager.has('memory__read_graph')).toBe(true);

    // Claude-Desktop layout, JSON: a renamed server replaces the old ones.
    await writeFile(configFile, JSON.stringify({ mcpServers: { graph: memoryServer('graph', 'memory.jsonl') } }));
    const oldPid = manager.serverPid('memory');
    const reloaded = await post('/api/v1/mcp/reload');
    expect(reloaded.status).toBe(200);
    const status = await reloaded.json();
    expect(status.servers).toEqual([expect.objectContaining({ name: 'graph', connected: true })]);
    expect(manager.has('memory__read_graph')).toBe(false);
    expect(manager.has('graph__read_graph')).toBe(true);
    expect(manager.serverPid('graph')).not.toBe(oldPid);
    const graph = await manager.invoke('graph__read_graph', {});
    expect(textOf(graph.content)).toContain('north gate');
  });
});

describe('McpManager over streamable HTTP', () => {
  let httpServer: http.Server;
  let url: string;
  let dir: string;
  let calls = 0;

  beforeAll(async () => {
    // A stateless SDK server: a fresh McpServer + transport per request.
    httpServer = http.createServer(async (req, res) => {
      const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
      mcp.registerTool(
        'echo.upper',
        { description: 'Upper-cases text', inputSchema: { text: z.string() } },
        async ({ text }) => {
          calls++;
          return { content: [{ type: 'text', text: text.toUpperCase() }] };
        },
      );
      mcp.registerTool('fail', { description: 'Always fails' }, async () => ({
        content: [{ type: 'text', text: 'nope' }],
        isError: true,
      }));
      // Answers only when cancelled (or after 5 s): for time-out and abort handling.
      mcp.registerTool('stall', { description: 'Waits' }, async (extra) => {
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, 5000).unref();
          extra.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve(undefined);
          });
        });
        return { content: [{ type: 'text', text: 'late' }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', () => resolve()));
    url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-http-'));
  });

  afterAll(async () => {
    httpServer.closeAllConnections();
    await new Promise((resolve) => httpServer.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('connects by url, sanitises tool names and reports tool-level errors', async () => {
    const configFile = path.join(dir, 'mcp.json');
    await writeFile(configFile, JSON.stringify({ servers: [{ name: 'remote', url }] }));
    const manager = new McpManager({ configFile, logger, reconnect: { initialMs: 50, maxMs: 100 } });
    try {
      await manager.start();
      expect(manager.status()).toEqual({
        enabled: true,
        servers: [{ name: 'remote', connected: true, tool_count: 3, transport: 'http' }],
        total_tools: 3,
      });
      expect(manager.tools().map((t) => t.name)).toEqual(['remote__echo_upper', 'remote__fail', 'remote__stall']);
      const result = await manager.invoke('remote__echo_upper', { text: 'gate' });
      expect(result).toEqual({ content: [{ type: 'text', text: 'GATE' }], isError: false });
      expect(calls).toBe(1);
      expect((await manager.invoke('remote__fail', {})).isError).toBe(true);
    } finally {
      await manager.close();
    }
  });

  it('substitutes ${NAME} from the given environment and names unset variables', async () => {
    const configFile = path.join(dir, 'vars.yaml');
    const port = (httpServer.address() as AddressInfo).port;
    await writeFile(
      configFile,
      'servers:\n  - name: remote\n    url: http://127.0.0.1:${MCP_PORT}/mcp\n' +
        '    headers: { Authorization: "Bearer ${MCP_TOKEN}" }\n',
    );
    const manager = new McpManager({ configFile, logger, environment: { MCP_PORT: String(port), MCP_TOKEN: 't' } });
    try {
      await manager.start();
      expect(manager.status().servers[0]).toMatchObject({ name: 'remote', connected: true });
    } finally {
      await manager.close();
    }
    const unset = new McpManager({ configFile, logger, environment: { MCP_PORT: String(port) } });
    await expect(unset.start()).rejects.toThrow('environment variable MCP_TOKEN is not set');
  });

  it('turns a call past timeout_ms into a timeout error and honours an abort signal', async () => {
    const configFile = path.join(dir, 'slow.json');
    await writeFile(configFile, JSON.stringify({ servers: [{ name: 'slow', url, timeout_ms: 100 }] }));
    const manager = new McpManager({ configFile, logger });
    try {
      await manager.start();
      const timedOut = await manager.invoke('slow__stall', {}).catch((err: unknown) => err);
      expect(timedOut).toBeInstanceOf(McpCallError);
      expect((timedOut as McpCallError).kind).toBe('timeout');

      const controller = new AbortController();
      const call = manager.invoke('slow__stall', {}, controller.signal);
      controller.abort(new Error('client went away'));
      await expect(call).rejects.toThrow('client went away');
      // The connection survives both.
      expect(manager.status().servers[0].connected).toBe(true);
      expect((await manager.invoke('slow__echo_upper', { text: 'ok' })).isError).toBe(false);
    } finally {
      await manager.close();
    }
  });

  it('notices an HTTP server that went away between calls and reconnects when it is back', async () => {
    const configFile = path.join(dir, 'flaky.json');
    await writeFile(configFile, JSON.stringify({ servers: [{ name: 'flaky', url }] }));
    const manager = new McpManager({ configFile, logger, reconnect: { initialMs: 50, maxMs: 100 }, healthCheckMs: 50 });
    const connected = () => manager.status().servers[0].connected;
    try {
      await manager.start();
      expect(connected()).toBe(true);
      const port = (httpServer.address() as AddressInfo).port;
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
      await until(() => !connected());
      expect(manager.status().servers[0].last_error).toBeTruthy();
      await expect(manager.invoke('flaky__fail', {})).rejects.toBeInstanceOf(McpServerUnavailableError);

      await new Promise<void>((resolve) => httpServer.listen(port, '127.0.0.1', () => resolve()));
      await until(connected);
      expect((await manager.invoke('flaky__echo_upper', { text: 'back' })).content).toEqual([
        { type: 'text', text: 'BACK' },
      ]);
    } finally {
      await manager.close();
    }
  });

  it('is disabled without a configuration file and refuses a missing one', async () => {
    const none = new McpManager({ logger });
    await none.start();
    expect(none.status()).toEqual({ enabled: false, servers: [], total_tools: 0 });
    await expect(none.invoke('x__y', {})).rejects.toBeInstanceOf(McpToolNotFoundError);
    await none.close();
    await none.close(); // closing twice is harmless; a reload after close is refused by the manager's queue
    await expect(none.reload()).rejects.toBeInstanceOf(QueueClosedError);
    const missing = new McpManager({ logger, configFile: path.join(dir, 'absent.yaml') });
    await expect(missing.start()).rejects.toThrow(/cannot read file \(ENOENT\)/);
  });

  it('reports an unreachable url disconnected and calls to it unavailable', async () => {
    const configFile = path.join(dir, 'down.json');
    await writeFile(configFile, JSON.stringify({ servers: [{ name: 'down', url: 'http://127.0.0.1:1/mcp' }] }));
    const manager = new McpManager({ configFile, logger, reconnect: { initialMs: 60_000, maxMs: 60_000 } });
    try {
      await manager.start();
      expect(manager.status().servers[0]).toMatchObject({ name: 'down', connected: false });
      expect(manager.status().servers[0].last_error).toBeTruthy();
    } finally {
      await manager.close();
    }
  });
});

describe('reconnectDelay', () => {
  it('doubles from initialMs per failed attempt up to maxMs', () => {
    const policy = { initialMs: 100, maxMs: 1000 };
    expect([0, 1, 2, 3, 4, 5, 100].map((a) => reconnectDelay(policy, a))).toEqual([
      100, 200, 400, 800, 1000, 1000, 1000,
    ]);
  });
});

describe('qualifiedToolName', () => {
  it('joins server and tool with __, replaces unsafe characters and bounds the length uniquely', () => {
    expect(qualifiedToolName('memory', 'read_graph')).toBe('memory__read_graph');
    expect(qualifiedToolName('fs', 'read.file/v2')).toBe('fs__read_file_v2');
    const a = qualifiedToolName('srv', 'x'.repeat(100));
    const b = qualifiedToolName('srv', 'x'.repeat(101));
    expect(a).toHaveLength(64);
    expect(b).toHaveLength(64);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});
