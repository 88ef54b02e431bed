import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestBroker } from './mqtt-broker.js';
import { freeLoopbackPort } from './free-port.js';
import { killProcess } from './kill-process.js';

/** Where Debian's `mosquitto` package puts the broker (`apt-get install -y mosquitto`, done by `.ci/run`). */
const MOSQUITTO_PATHS = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'];

/** The mosquitto binary, or undefined where the package is not installed. */
function mosquittoBinary(): string | undefined {
  return MOSQUITTO_PATHS.find((candidate) => existsSync(candidate));
}

/** Why tests that need mosquitto are skipped here (for their describe title), or undefined when it is installed. */
export function mosquittoMissing(): string | undefined {
  return mosquittoBinary()
    ? undefined
    : `SKIPPED: Debian's mosquitto is not installed (apt-get install -y mosquitto; .ci/run does it as root)`;
}

/** Resolves once something accepts connections on the port (bounded: 200 tries, 25 ms apart). */
async function accepting(port: number, exited: () => string | undefined): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const why = exited();
    if (why) throw new Error(`mosquitto exited: ${why}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`mosquitto did not listen on 127.0.0.1:${port}`);
}

/**
 * Debian's mosquitto as a real broker for tests, a process on a loopback port (anonymous, no persistence), with the
 * TestBroker shape: `stop()` kills it (every client drops), `start()` runs a fresh one on the same port.
 */
export async function startMosquitto(): Promise<TestBroker> {
  const binary = mosquittoBinary();
  if (!binary) throw new Error(mosquittoMissing());
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mosquitto-'));
  const port = await freeLoopbackPort();
  const config = path.join(dir, 'mosquitto.conf');
  await writeFile(config, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
  let child: ChildProcess | undefined;
  const start = async () => {
    let exit: string | undefined;
    let stderr = '';
    const started = spawn(binary, ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    started.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    started.once('exit', (code, signal) => (exit = `${code ?? signal}: ${stderr.trim()}`));
    child = started;
    await accepting(port, () => exit);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    await killProcess(running);
  };
  await start();
  return {
    url: `mqtt://127.0.0.1:${port}`,
    start,
    stop,
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
