import { loadAlertDispatchConfig } from '../config.js';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { createLogger } from '../../lib/log/index.js';
import { startAlertDispatch } from '../main.js';

/** The arguments startAlertDispatch takes for `env`: its validated configuration and the environment itself. */
const configured = (env: NodeJS.ProcessEnv) => [loadAlertDispatchConfig(env), env] as const;

const logger = createLogger({ service: 'mcp-dispatch-test', level: 'error', json: true });
const require = createRequire(import.meta.url);
const memoryBin = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')),
  'dist/index.js',
);

/**
 * The whole service with a real MCP server: an alert dispatched to an MCP tool runs it, the result reaches a
 * WebSocket subscriber, and the tool's effect is visible through the manual invoke endpoint.
 */
describe('alert dispatch to an MCP tool (service + real memory server)', () => {
  let dir: string;
  let service: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-dispatch-'));
    const config = path.join(dir, 'mcp.json');
    await writeFile(
      config,
      JSON.stringify({
        servers: [
          {
            name: 'memory',
            command: process.execPath,
            args: [memoryBin],
            // Substituted from the service's environment, as the MCP README documents.
            env: { MEMORY_FILE_PATH: '${MCP_MEMORY_FILE}' },
          },
        ],
      }),
    );
    service = await startAlertDispatch(
      ...configured({
        ALERT_DISPATCH_PORT: '0',
        ARGUS_DATA_DIR: dir,
        ALERT_MCP_CONFIG_FILE: config,
        MCP_MEMORY_FILE: path.join(dir, 'memory.jsonl'),
      }),
      logger,
    );
  });

  afterAll(async () => {
    await service?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the MCP tool named in the alert and fans the result out over WebSocket', async () => {
    const health = await (await fetch(`${service.url}/api/v1/health`)).json();
    expect(health.mcp_enabled).toBe(true);
    const tools = await (await fetch(`${service.url}/api/v1/tools`)).json();
    expect(tools.tools.map((t: { name: string }) => t.name)).toContain('memory__create_entities');

    const ws = new WebSocket(`${service.url.replace('http', 'ws')}/api/v1/ws`);
    const frames: Array<{ event: string; data: any }> = [];
    const waiters: Array<() => void> = [];
    ws.on('message', (raw) => {
      frames.push(JSON.parse(raw.toString()));
      waiters.splice(0).forEach((w) => w());
    });
    const next = async (event: string) => {
      for (;;) {
        const i = frames.findIndex((f) => f.event === event);
        if (i >= 0) return frames.splice(i, 1)[0];
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    expect((await next('init')).data.mcp_enabled).toBe(true);

    const res = await fetch(`${service.url}/api/v1/actions/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        source_id: 'cam-9',
        alert_name: 'loitering',
        tools: ['memory__create_entities'],
        tool_arguments: {
          memory__create_entities: {
            entities: [{ name: 'cam-9', entityType: 'camera', observations: ['loitering at dock'] }],
          },
        },
      }),
    });
    const result = await res.json();
    expect(result.actions_taken).toEqual(['memory__create_entities']);

    const action = await next('alert_action');
    expect(action.data).toMatchObject({
      event_id: result.event_id,
      source_id: 'cam-9',
      actions_taken: ['memory__create_entities'],
    });
    ws.close();

    const read = await fetch(`${service.url}/api/v1/mcp/tools/memory__read_graph/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: {} }),
    });
    const graph = await read.json();
    expect(JSON.stringify(graph.content)).toContain('loitering at dock');
    // The server wrote where the substituted variable points, not to a file literally named `${MCP_MEMORY_FILE}`.
    expect(await readFile(path.join(dir, 'memory.jsonl'), 'utf8')).toContain('loitering at dock');
  });

  it('refuses to start when the MCP file names a variable the environment does not set', async () => {
    await expect(
      startAlertDispatch(
        ...configured({
          ALERT_DISPATCH_PORT: '0',
          ARGUS_DATA_DIR: dir,
          ALERT_MCP_CONFIG_FILE: path.join(dir, 'mcp.json'),
        }),
        logger,
      ),
    ).rejects.toThrow(/environment variable MCP_MEMORY_FILE is not set/);
  });
});
