import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { KubernetesResourceStore, leaderElectionRules, OPERATOR_RULES } from './drivers/kubernetes/index.js';
import { FakeApiServer, type RecordedRequest } from './drivers/kubernetes/testing/fake-api-server.js';
import { startOperator, type StartedOperator } from './main.js';
import { newIngestJob } from './ports/resource-store.contract.js';
import { captureLogs } from '../test/support/logs.js';

/** A live read of one object (not a list, not a watch) by the operator. */
const liveGet = (r: RecordedRequest) =>
  r.user === 'op' && r.method === 'GET' && r.query.watch !== 'true' && /\/(ingestjobs|jobs)\/[^/]+$/.test(r.path);

describe('argus operator reads from its informer caches', () => {
  let fake: FakeApiServer;
  let dir: string;
  let operator: StartedOperator | undefined;

  beforeEach(async () => {
    fake = await FakeApiServer.start({
      admin: 'admin',
      op: {
        bindings: [{ rules: OPERATOR_RULES }, { rules: leaderElectionRules('argus-operator'), namespace: 'argus' }],
      },
    });
    dir = await mkdtemp(path.join(os.tmpdir(), 'argus-cache-reads-'));
  });
  afterEach(async () => {
    await operator?.close();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Reconciles so far (succeeded or requeued), from the operator's own /metrics. */
  async function reconciles(): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${operator!.port}/metrics`)).text();
    const lines = text.matchAll(
      /^argus_controller_reconcile_total\{controller="ingestjob",result="(?:success|requeue)"\} (\d+)$/gm,
    );
    return [...lines].reduce((sum, [, count]) => sum + Number(count), 0);
  }

  it('reconciles a steady-state IngestJob without one live GET (every resync, IngestJob and Job from the caches)', async () => {
    const kubeconfig = path.join(dir, 'kubeconfig');
    await writeFile(kubeconfig, fake.kubeConfig('op').exportConfig());
    operator = await startOperator(
      {
        KUBECONFIG: kubeconfig,
        ARGUS_DATA_DIR: dir,
        ARGUS_NAMESPACE: 'argus',
        ARGUS_WORKER_IMAGE: 'ghcr.io/argus-dev/argus:test',
        ARGUS_OPERATOR_HOST: '127.0.0.1',
        ARGUS_OPERATOR_PORT: '0',
        ARGUS_POD_NAME: 'op',
        ARGUS_OPERATOR_RESYNC_SECONDS: '1',
      },
      captureLogs().logger,
    );
    await fake.waitForRequest((r) => r.user === 'op' && r.query.watch === 'true' && r.path.endsWith('/ingestjobs'));
    await new KubernetesResourceStore(fake.kubeConfig('admin')).create('IngestJob', newIngestJob('job-a', 'media', 2));
    await fake.waitForRequest((r) => r.user === 'op' && r.method === 'PUT' && r.path.endsWith('/job-a/status'));

    // Steady state: a window of two resyncs after another in which the operator wrote no status (right after a write,
    // a reconcile woken by the Job's events may read live until the watch delivers that write: read-your-writes).
    const wroteStatus = (requests: RecordedRequest[]) =>
      requests.some((r) => r.user === 'op' && r.method === 'PUT' && r.path.endsWith('/status'));
    const twoResyncs = async () => {
      const from = fake.requests.length;
      const start = await reconciles();
      // Bounded: a resync every second reconciles the job; each poll is one request to the operator.
      for (let polls = 0; polls < 10_000 && (await reconciles()) < start + 2; polls++);
      return fake.requests.slice(from);
    };
    let previous = await twoResyncs();
    let window = await twoResyncs();
    for (let attempt = 0; attempt < 10 && (wroteStatus(previous) || wroteStatus(window)); attempt++) {
      [previous, window] = [window, await twoResyncs()];
    }
    expect(wroteStatus(window)).toBe(false);
    expect(await reconciles()).toBeGreaterThanOrEqual(2);
    expect(window.filter(liveGet).map((r) => r.path)).toEqual([]);
  });
});
