import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { newIngestJob } from './ports/resource-store.contract.js';
import { updateStatusWithRetry, type WorkerContext } from './ports/index.js';
import { INGEST_WORKER_RULES, KubernetesResourceStore } from './drivers/kubernetes/index.js';
import { FakeApiServer } from './drivers/kubernetes/testing/fake-api-server.js';
import { parseWorkerArgs, runWorker, WorkerUsageError, type WorkerStarter } from './worker-command.js';
import { captureLogs } from '../test/support/logs.js';
import { childEnv, spawnArgus } from '../test/support/argus-process.js';
import { freeLoopbackPort } from '../test/support/free-port.js';

describe('argus worker: arguments', () => {
  it('reads the job, the shard index (JOB_COMPLETION_INDEX unless --index) and the completions', () => {
    expect(parseWorkerArgs(['ingest', '--job', 'media/job-a', '--completions', '4'], 3)).toEqual({
      worker: 'ingest',
      namespace: 'media',
      name: 'job-a',
      index: 3,
      completions: 4,
    });
    expect(parseWorkerArgs(['ingest', '--job', 'media/job-a', '--index', '1', '--completions', '4'], 3).index).toBe(1);
    expect(parseWorkerArgs(['ingest', '--job', 'media/job-a'], undefined)).toMatchObject({ index: 0, completions: 1 });
    expect(parseWorkerArgs(['ingest', '--job', 'media/job-a', '--health-port', '8090'], 0).healthPort).toBe(8090);
    expect(parseWorkerArgs(['ingest', '--job', 'media/job-a'], 0).healthPort).toBeUndefined();
  });

  it.each([
    [[], /name the worker/],
    [['ingest'], /--job needs/],
    [['ingest', '--job', 'job-a'], /--job needs/],
    [['ingest', '--job', 'Media/job-a'], /--job needs/],
    [['ingest', '--job', 'media/job-a', '--index', '4', '--completions', '4'], /not below/],
    [['ingest', '--job', 'media/job-a', '--completions', '0'], /at least 1/],
    [['ingest', '--job', 'media/job-a', '--shard', '1'], /unknown or incomplete option --shard/],
    [['ingest', '--job', 'media/job-a', '--health-port', 'http'], /--health-port needs an integer/],
    [['ingest', '--job', 'media/job-a', '--health-port', '70000'], /--health-port needs a port number/],
  ])('refuses %j', (args, message) => {
    expect(() => parseWorkerArgs(args as string[], undefined)).toThrow(message);
    expect(() => parseWorkerArgs(args as string[], undefined)).toThrow(WorkerUsageError);
  });
});

describe('argus worker against the fake API server', () => {
  let fake: FakeApiServer;
  let dir: string;
  let kubeconfig: string;

  beforeEach(async () => {
    fake = await FakeApiServer.start({ admin: 'admin', worker: INGEST_WORKER_RULES });
    dir = await mkdtemp(path.join(os.tmpdir(), 'argus-worker-'));
    kubeconfig = path.join(dir, 'kubeconfig');
    await writeFile(kubeconfig, fake.kubeConfig('worker').exportConfig());
    await new KubernetesResourceStore(fake.kubeConfig('admin')).create('IngestJob', newIngestJob('job-a', 'media', 4));
  });
  afterEach(async () => {
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the named worker on its shard over the API server (needing no more than INGEST_WORKER_RULES), then closes it', async () => {
    const contexts: Omit<WorkerContext, 'signal'>[] = [];
    let closed = false;
    const ingest: WorkerStarter = async (env, resources) => ({
      worker: async ({ signal: _signal, ...context }) => {
        contexts.push(context);
        const job = await resources.get('IngestJob', context.namespace, context.name);
        for (let i = context.index; i < job!.spec.items.length; i += context.completions) {
          await updateStatusWithRetry(resources, 'IngestJob', context.namespace, context.name, (latest) => ({
            ...latest.status,
            items: [...(latest.status?.items ?? []), { index: i, identifier: `item-${i}.mp4`, status: 'success' }],
          }));
        }
        expect(env.MM_DATAPREP_DEFAULT_BUCKET).toBe('media');
      },
      close: async () => {
        closed = true;
      },
    });
    await runWorker(
      ['ingest', '--job', 'media/job-a', '--completions', '2'],
      { KUBECONFIG: kubeconfig, JOB_COMPLETION_INDEX: '1', MM_DATAPREP_DEFAULT_BUCKET: 'media' },
      captureLogs().logger,
      { ingest },
      new AbortController().signal,
    );
    expect(contexts).toEqual([{ namespace: 'media', name: 'job-a', index: 1, completions: 2 }]);
    expect(closed).toBe(true);
    const items = fake.get('argus.dev', 'ingestjobs', 'media', 'job-a').status.items;
    expect(items.map((i: { index: number }) => i.index)).toEqual([1, 3]);
    expect(fake.requests.filter((r) => r.status === 403)).toEqual([]);
  });

  it("answers GET /healthz on --health-port while its worker runs (the pod's probes), and stops answering after", async () => {
    // The probe server listens on a port it is given, as in a pod.
    const port = await freeLoopbackPort();
    const url = `http://127.0.0.1:${port}`;
    const seen: number[] = [];
    const ingest: WorkerStarter = async () => ({
      worker: async () => {
        seen.push((await fetch(`${url}/healthz`)).status, (await fetch(`${url}/other`)).status);
      },
      close: async () => undefined,
    });
    await runWorker(
      ['ingest', '--job', 'media/job-a', '--health-port', String(port)],
      { KUBECONFIG: kubeconfig },
      captureLogs().logger,
      { ingest },
      new AbortController().signal,
      '127.0.0.1',
    );
    expect(seen).toEqual([200, 404]);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('fails when its worker cannot go on (the pod fails, the Job retries it), and still closes', async () => {
    let closed = false;
    const ingest: WorkerStarter = async () => ({
      worker: async () => {
        throw new Error('store unreachable');
      },
      close: async () => {
        closed = true;
      },
    });
    await expect(
      runWorker(
        ['ingest', '--job', 'media/job-a'],
        { KUBECONFIG: kubeconfig },
        captureLogs().logger,
        { ingest },
        new AbortController().signal,
      ),
    ).rejects.toThrow('store unreachable');
    expect(closed).toBe(true);
    await expect(
      runWorker(
        ['caption', '--job', 'media/job-a'],
        { KUBECONFIG: kubeconfig },
        captureLogs().logger,
        { ingest },
        new AbortController().signal,
      ),
    ).rejects.toThrow(/unknown worker caption/);
  });

  it('the command exits 2 with the usage on bad arguments', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/argus.ts', 'worker', 'ingest', '--job', 'nope'], {
      cwd: path.resolve(import.meta.dirname, '..'),
      env: { ...process.env, NODE_OPTIONS: '', KUBECONFIG: kubeconfig },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr).toMatch(/argus worker: --job needs <namespace>\/<name>/);
    expect(stderr).toMatch(/usage: argus/);
  });

  it("argus worker ingest runs dataprep's ingest worker in a real process over the API server and exits 0", async () => {
    // batch_existing items whose videos are not in the bucket: each one is an error result, the shard still succeeds.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bin/argus.ts', 'worker', 'ingest', '--job', 'media/job-a', '--completions', '2'],
      {
        cwd: path.resolve(import.meta.dirname, '..'),
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          KUBECONFIG: kubeconfig,
          JOB_COMPLETION_INDEX: '1',
          ARGUS_DATA_DIR: dir,
          MM_DATAPREP_PRELOAD_MODELS: 'false',
          ARGUS_LOG_FORMAT: 'json',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const [code] = await once(child, 'exit');
    expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });
    const items = fake.get('argus.dev', 'ingestjobs', 'media', 'job-a').status.items;
    expect(items).toEqual([
      expect.objectContaining({ index: 1, identifier: 'item-1.mp4', videoId: 'video-1', status: 'error' }),
      expect.objectContaining({ index: 3, identifier: 'item-3.mp4', videoId: 'video-3', status: 'error' }),
    ]);
    expect(items[0].message).toMatch(/No video found/);
    expect(fake.requests.filter((r) => r.status === 403)).toEqual([]);
    expect(new Set(fake.requests.filter((r) => r.user === 'worker').map((r) => `${r.method} ${r.path}`))).toEqual(
      new Set([
        'GET /apis/argus.dev/v1alpha1/namespaces/media/ingestjobs/job-a',
        'PUT /apis/argus.dev/v1alpha1/namespaces/media/ingestjobs/job-a/status',
      ]),
    );
  });

  it('finishes the item in progress on a first SIGTERM and ignores a second one (logged), instead of dying mid-item', async () => {
    // The first item's result is held at the API server until both signals were sent: the shard is mid-item then.
    let release!: () => void;
    const held = new Promise<undefined>((resolve) => (release = () => resolve(undefined)));
    let putSeen!: () => void;
    const mid = new Promise<void>((resolve) => (putSeen = resolve));
    fake.intercept((r) => {
      if (r.method !== 'PUT' || !r.path.endsWith('/ingestjobs/job-a/status')) return undefined;
      putSeen();
      return held;
    });
    const worker = spawnArgus(
      process.execPath,
      ['--import', 'tsx', 'bin/argus.ts', 'worker', 'ingest', '--job', 'media/job-a', '--completions', '2'],
      childEnv({
        KUBECONFIG: kubeconfig,
        JOB_COMPLETION_INDEX: '1',
        ARGUS_DATA_DIR: dir,
        MM_DATAPREP_PRELOAD_MODELS: 'false',
      }),
    );
    await mid;
    worker.child.kill('SIGTERM');
    // Signals of one kind are not queued: the second is sent once the first was handled.
    await worker.waitForRecord((r) => r.message === 'stopping after the item in progress');
    worker.child.kill('SIGTERM');
    await worker.waitForRecord((r) => r.message === 'already stopping: signal ignored');
    release();
    const exit = await worker.exited;
    // Not killed by the second signal: the process ended by itself, having written the result it was writing.
    expect(exit.signal).toBeNull();
    const items = fake.get('argus.dev', 'ingestjobs', 'media', 'job-a').status.items;
    expect(items).toContainEqual(expect.objectContaining({ index: 1, status: 'error' }));
  }, 60_000);
});
