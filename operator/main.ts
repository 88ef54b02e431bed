/**
 * `argus operator`: the controllers against a Kubernetes API server, behind leader election, with /healthz, /readyz
 * and /metrics.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import client from 'prom-client';
import type { Logger } from '../services/lib/log/index.js';
import { userAgent } from '../services/lib/user-agent/index.js';
import { loadClusterOperatorConfig } from './config.js';
import { startControllers, type RunningControllers } from './controllers/index.js';
import {
  describeError,
  EventRecorder,
  JobWorkloadDriver,
  KubernetesResourceStore,
  LeaderElector,
  loadKubeConfig,
} from './drivers/kubernetes/index.js';

/** A running operator. */
export interface StartedOperator {
  /** Port of /healthz, /readyz and /metrics. */
  port: number;
  /** Whether this replica leads now. */
  readonly leading: boolean;
  /** Stops reconciling, releases the Lease (a standby takes over at once) and closes the HTTP server. */
  close(): Promise<void>;
}

/** Operator-level metrics (the controllers register theirs in the same registry). */
function operatorMetrics(registry: client.Registry) {
  return {
    leader: new client.Gauge({
      name: 'argus_operator_leader',
      help: '1 while this replica holds the leader Lease and reconciles, else 0.',
      registers: [registry],
    }),
    watchRestarts: new client.Counter({
      name: 'argus_operator_watch_errors_total',
      help: 'List or watch failures by kind (each is followed by a restart after a back-off).',
      labelNames: ['kind'],
      registers: [registry],
    }),
    leaseErrors: new client.Counter({
      name: 'argus_operator_lease_errors_total',
      help: 'Failed attempts to acquire or renew the leader Lease (other than losing a race).',
      registers: [registry],
    }),
  };
}

/**
 * Starts the operator: kubeconfig (KUBECONFIG, else in-cluster in a pod, else ~/.kube/config), the kubernetes
 * ResourceStore (limited to WATCH_NAMESPACE when set) and Job driver, leader election on a Lease in ARGUS_NAMESPACE
 * (the pod's namespace), the controllers while leading, and the HTTP endpoints.
 */
export async function startOperator(env: Record<string, string | undefined>, logger: Logger): Promise<StartedOperator> {
  const { platform, controllers: settings, kubernetes: cluster, http: endpoint } = loadClusterOperatorConfig(env);
  const kubeConfig = loadKubeConfig(cluster.kubeconfig, userAgent('operator'));
  const registry = new client.Registry();
  const metrics = operatorMetrics(registry);
  const store = new KubernetesResourceStore(kubeConfig, {
    watchNamespace: cluster.watchNamespace,
    onWatchError: (kind, error) => {
      metrics.watchRestarts.inc({ kind });
      logger.warn('list or watch failed; restarting it', { kind, error: describeError(error) });
    },
  });
  const driver = new JobWorkloadDriver(kubeConfig, cluster.worker, {
    watchNamespace: cluster.watchNamespace,
    onWatchError: (error) => {
      metrics.watchRestarts.inc({ kind: 'Job' });
      logger.warn('Job list or watch failed; restarting it', { error: describeError(error) });
    },
  });

  let controllers: RunningControllers | undefined;
  let controllersStarted = false;
  let leading = false;
  // Start and stop take turns: a leadership lost while the controllers start stops them once they have started.
  let transition: Promise<void> = Promise.resolve();
  const lead = () => {
    transition = transition.then(async () => {
      leading = true;
      metrics.leader.set(1);
      logger.info('leading: starting the controllers', { namespace: cluster.watchNamespace ?? '(all)' });
      try {
        controllers = await startControllers({
          store,
          driver,
          config: settings,
          logger,
          registry,
          namespace: cluster.watchNamespace,
          events: events.sink(),
        });
        controllersStarted = true;
      } catch (error) {
        logger.error('the controllers did not start', { error: describeError(error) });
      }
    });
  };
  const follow = () => {
    transition = transition.then(async () => {
      leading = false;
      metrics.leader.set(0);
      controllersStarted = false;
      const running = controllers;
      controllers = undefined;
      await running?.stop();
      logger.info('not leading: controllers stopped');
    });
    return transition;
  };

  const election = cluster.leaderElection;
  const identity = election.identity ?? `${os.hostname()}-${randomBytes(4).toString('hex')}`;
  const events = new EventRecorder(kubeConfig, { controller: 'argus.dev/operator', instance: identity });
  // `kubectl get events` (and describe lease) show who took the lead and when, as client-go's elector does.
  const announce = () =>
    events
      .record(
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          namespace: platform.namespace,
          name: election.leaseName,
        },
        { type: 'Normal', reason: 'LeaderElection', action: 'Acquire', note: `${identity} became leader` },
      )
      .catch((error) => logger.warn('could not record the leader Event', { error: describeError(error) }));
  const elector = election.enabled
    ? new LeaderElector(kubeConfig, {
        namespace: platform.namespace,
        name: election.leaseName,
        identity,
        leaseDurationMs: election.leaseDurationMs,
        renewDeadlineMs: election.renewDeadlineMs,
        retryPeriodMs: election.retryPeriodMs,
        onStartedLeading: () => {
          lead();
          void announce();
        },
        onStoppedLeading: follow,
        onNewLeader: (holder) => logger.info('leader seen', { leader: holder || '(released)' }),
        onError: (error) => {
          metrics.leaseErrors.inc();
          logger.warn('leader Lease attempt failed', { error: describeError(error) });
        },
      })
    : undefined;

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://operator').pathname;
    const reply = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed\n');
    if (path === '/healthz') return reply(200, 'ok\n');
    if (path === '/readyz') {
      // A standby is ready (it waits for the Lease); a leader once its informers have listed.
      const ready = !leading || (controllersStarted && store.watchesSynced);
      return reply(ready ? 200 : 503, ready ? (leading ? 'ok: leading\n' : 'ok: standby\n') : 'starting\n');
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => reply(200, text, registry.contentType),
        () => reply(500, 'metrics unavailable\n'),
      );
      return;
    }
    reply(404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(endpoint.port, endpoint.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  logger.info('operator listening', { port, identity, leaderElection: election.enabled, lease: election.leaseName });

  if (elector) elector.start();
  else lead();

  return {
    port,
    get leading() {
      return leading;
    },
    close: async () => {
      if (elector) await elector.stop();
      else await follow();
      await transition;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
