import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { childEnv, spawnArgus, tempDir, type ArgusProcess } from '../test/support/argus-process.js';
import { userAgent } from '../services/lib/user-agent/index.js';
import { leaderElectionRules, OPERATOR_RULES } from './drivers/kubernetes/index.js';
import { FakeApiServer } from './drivers/kubernetes/testing/fake-api-server.js';

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/argus/leases/argus-operator';

describe('argus operator (a real process)', () => {
  let fake: FakeApiServer;
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let operator: ArgusProcess | undefined;

  beforeEach(async () => {
    fake = await FakeApiServer.start({
      admin: 'admin',
      'op-a': {
        bindings: [{ rules: OPERATOR_RULES }, { rules: leaderElectionRules('argus-operator'), namespace: 'argus' }],
      },
    });
    temp = await tempDir('argus-operator-signals-');
  });
  afterEach(async () => {
    operator?.child.kill('SIGKILL');
    await operator?.closed;
    await fake.close();
    await temp.remove();
  });

  it('finishes its graceful shutdown on the first SIGTERM, ignoring a second one, and releases the Lease; names itself in every request', async () => {
    const kubeconfig = path.join(temp.dir, 'kubeconfig');
    await writeFile(kubeconfig, fake.kubeConfig('op-a').exportConfig());
    // The release is held until the second signal has been seen, so the process is still shutting down when it comes.
    let secondSignalSeen!: () => void;
    const held = new Promise<undefined>((resolve) => (secondSignalSeen = () => resolve(undefined)));
    fake.intercept((r) =>
      r.method === 'PUT' && r.path === LEASE && r.body?.spec?.holderIdentity === '' ? held : undefined,
    );
    operator = spawnArgus(
      process.execPath,
      ['--import', 'tsx', 'bin/argus.ts', 'operator'],
      childEnv({
        KUBECONFIG: kubeconfig,
        ARGUS_DATA_DIR: temp.dir,
        ARGUS_NAMESPACE: 'argus',
        ARGUS_WORKER_IMAGE: 'ghcr.io/argus-dev/argus:test',
        ARGUS_OPERATOR_HOST: '127.0.0.1',
        ARGUS_OPERATOR_PORT: '0',
        ARGUS_POD_NAME: 'op-a',
        ARGUS_LEADER_ELECTION_LEASE_DURATION_SECONDS: '3',
        ARGUS_LEADER_ELECTION_RENEW_DEADLINE_SECONDS: '2',
        ARGUS_LEADER_ELECTION_RETRY_PERIOD_SECONDS: '0.2',
      }),
    );
    await operator.waitForRecord((r) => r.message === 'leading: starting the controllers');
    await fake.waitForRequest((r) => r.user === 'op-a' && r.query.watch === 'true' && r.path.endsWith('/ingestjobs'));

    operator.child.kill('SIGTERM');
    await operator.waitForRecord((r) => r.message === 'shutting down');
    operator.child.kill('SIGTERM');
    await operator.waitForRecord((r) => r.message === 'already shutting down: signal ignored');
    secondSignalSeen();

    expect(await operator.exited).toEqual({ code: 0, signal: null });
    const messages = operator.records.map((r) => r.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        'shutting down',
        'already shutting down: signal ignored',
        'not leading: controllers stopped',
      ]),
    );
    // Every request names the operator (the API server's audit log shows it), watches included.
    const agents = new Set(fake.requests.filter((r) => r.user === 'op-a').map((r) => r.userAgent));
    expect([...agents]).toEqual([userAgent('operator')]);
    expect(userAgent('operator')).toMatch(/^argus-operator\/\d+\.\d+\.\d+/);
    // Released as client-go's ReleaseOnCancel does: a standby takes over at its next attempt, not a lease later.
    expect(fake.get('coordination.k8s.io', 'leases', 'argus', 'argus-operator').spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
    });
  });
});
