import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freeLoopbackPort } from '../../../../test/support/free-port.js';
import { killProcess } from '../../../../test/support/kill-process.js';

/** Where the tests find Debian's redis-server (installed by .ci/run); undefined when it is not installed. */
export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(
  (candidate) => spawnSync(candidate, ['--version']).status === 0,
);

/** A real Redis server on 127.0.0.1, started by a test. */
export interface RedisServer {
  url: string;
  port: number;
  /** Stops the server (SIGKILL: a crash, nothing saved — it saves nothing anyway). */
  stop(): Promise<void>;
  /** Starts it again on the same port (after `stop`): a restart seen by connected clients. */
  restart(): Promise<void>;
}

function launch(port: number): Promise<ChildProcess> {
  const child = spawn(
    REDIS_SERVER!,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)));
  });
}

/** Starts redis-server on a free loopback port; resolves once it accepts connections. */
export async function startRedisServer(): Promise<RedisServer> {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const port = await freeLoopbackPort();
  let child: ChildProcess | undefined = await launch(port);
  const stop = async () => {
    const running = child;
    child = undefined;
    await killProcess(running);
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    restart: async () => {
      await stop();
      child = await launch(port);
    },
  };
}
