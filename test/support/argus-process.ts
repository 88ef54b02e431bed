import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, where `npm start` and `bin/argus.ts` run. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** One JSON log line of a spawned process. */
export type LogRecord = Record<string, unknown> & { message?: string };

/** A spawned Argus command: its log lines as they arrive, its output and its exit. */
export interface ArgusProcess {
  child: ChildProcess;
  records: LogRecord[];
  stdout(): string;
  stderr(): string;
  /** The first log record `match` accepts; rejects when the process exits without writing one. */
  waitForRecord(match: (record: LogRecord) => boolean): Promise<LogRecord>;
  /** The process ended (a child it left behind may still hold its output open). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The process ended and its output is read to the end. */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * An environment for a child Argus process: the inherited one without jest's NODE_OPTIONS and without any ARGUS_*,
 * service or LLM setting of the test run, JSON logs, and `overrides` on top.
 */
export function childEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const owned = /^(ARGUS_|MM_DATAPREP_|ALERT_|FRAME_ANALYSIS_|CAPTION_QA_|LLM_|VLM_|MQTT_|WEBHOOK_)/;
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !owned.test(name) && name !== 'NODE_OPTIONS'),
  );
  return { ...env, ARGUS_LOG_FORMAT: 'json', ...overrides };
}

/**
 * The environment of a child `argus up` for a test: `childEnv` with every service on a free port (never the fixed
 * defaults, which another process may hold), its own data and models directories and one inference thread.
 */
export function upEnv(dataDir: string, modelsDir: string, overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return childEnv({
    ARGUS_DATA_DIR: dataDir,
    ARGUS_MODELS_DIR: modelsDir,
    ARGUS_ORT_THREADS: '1',
    MM_DATAPREP_HOST_PORT: '0',
    ALERT_DISPATCH_PORT: '0',
    FRAME_ANALYSIS_PORT: '0',
    CAPTION_QA_PORT: '0',
    CAPTION_RUNS_PORT: '0',
    CAMERA_RULES_PORT: '0',
    ...overrides,
  });
}

/** Spawns `command args` in the repository root with `env`, collecting its stdout as JSON log lines. */
export function spawnArgus(command: string, args: string[], env: NodeJS.ProcessEnv): ArgusProcess {
  const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const records: LogRecord[] = [];
  const waiters: { match: (r: LogRecord) => boolean; resolve: (r: LogRecord) => void }[] = [];
  let out = '';
  let err = '';
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      let record: LogRecord;
      try {
        record = JSON.parse(line);
      } catch {
        continue; // npm's own banner lines
      }
      records.push(record);
      for (const waiter of waiters.filter((w) => w.match(record))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(record);
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const ended = (event: 'exit' | 'close') =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once(event, (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal })),
    );
  const exited = ended('exit');
  const closed = ended('close');
  return {
    child,
    records,
    stdout: () => out,
    stderr: () => err,
    exited,
    closed,
    waitForRecord: (match) => {
      const seen = records.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then(({ code, signal }) =>
          reject(new Error(`exited (${code ?? signal}) before the awaited log line:\n${out}\n${err}`)),
        );
      });
    },
  };
}

/** Runs the `argus` command line (`node --import tsx bin/argus.ts …`) to its exit. */
export async function runArgusCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = spawnArgus(process.execPath, ['--import', 'tsx', 'bin/argus.ts', ...args], env);
  const { code } = await run.closed;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** A fresh temporary directory, and the way to remove it. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A child `argus up` with every service listening, and the way to stop it. */
export interface RunningArgusUp {
  process: ArgusProcess;
  /** Each service's root URL (where /metrics is; its API lies under its base path). */
  roots: Record<string, string>;
  /** SIGTERM, then the data directory removed. */
  stop(): Promise<void>;
}

/**
 * Starts `argus up` as a child process on free ports (upEnv) with its own data directory, and resolves once every
 * service in `services` logged that it listens.
 */
export async function startArgusUp(
  services: string[],
  modelsDir: string,
  overrides: Record<string, string> = {},
): Promise<RunningArgusUp> {
  const data = await tempDir('argus-up-');
  const child = spawnArgus(
    process.execPath,
    ['--import', 'tsx', 'bin/argus.ts', 'up'],
    upEnv(data.dir, modelsDir, overrides),
  );
  const stop = async () => {
    if (child.child.exitCode === null) {
      child.child.kill('SIGTERM');
      await child.exited;
    }
    await data.remove();
  };
  try {
    await child.waitForRecord((r) => r.message === 'argus is up');
    const roots: Record<string, string> = {};
    for (const name of services) {
      roots[name] = String((await child.waitForRecord((r) => r.message === `${name} listening`)).url);
    }
    return { process: child, roots, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
