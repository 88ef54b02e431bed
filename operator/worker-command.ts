/**
 * `argus worker <name> --job <namespace>/<name> [--index <i>] [--completions <n>]`: one shard of a workload, in a Job
 * pod. The index defaults to JOB_COMPLETION_INDEX (set by the Job controller in Indexed mode).
 * `argus worker <name> --resource <namespace>/<name>`: the worker of a long-running workload, in a Deployment's pod
 * (index 0 of 1; it runs until SIGTERM).
 * `--health-port <port>` (either form): `GET /healthz` answers 200 on that port while the process runs and its event
 * loop turns, for the pod's liveness probe.
 */
import http from 'node:http';
import { once } from 'node:events';
import type { Logger } from '../services/lib/log/index.js';
import { userAgent } from '../services/lib/user-agent/index.js';
import { loadWorkerSettings } from './config.js';
import { KubernetesResourceStore, loadKubeConfig } from './drivers/kubernetes/index.js';
import type { ResourceStore, Worker } from './ports/index.js';

/** Builds a worker from the environment over a resource store (e.g. dataprep's startIngestWorker). */
export type WorkerStarter = (
  env: Record<string, string | undefined>,
  resources: ResourceStore,
  logger: Logger,
) => Promise<{ worker: Worker; close(): Promise<void> }>;

/** The command line was wrong: printed with the usage, exit 2. */
export class WorkerUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerUsageError';
  }
}

/** What `argus worker` was asked to do. */
export interface WorkerInvocation {
  worker: string;
  namespace: string;
  name: string;
  index: number;
  completions: number;
  /** Where `GET /healthz` answers (the pod's probes); none when undefined. */
  healthPort?: number;
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function count(flag: string, value: string | undefined, min: number): number {
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < min) {
    throw new WorkerUsageError(`${flag} needs an integer of at least ${min}`);
  }
  return Number(value);
}

/**
 * Parses `<name> --job <ns>/<name> [--index i] [--completions n]` (the index falls back to JOB_COMPLETION_INDEX) or
 * `<name> --resource <ns>/<name>` (index 0 of 1).
 */
export function parseWorkerArgs(args: string[], completionIndex: number | undefined): WorkerInvocation {
  const [worker, ...flags] = args;
  if (!worker || worker.startsWith('-')) throw new WorkerUsageError('name the worker, e.g. argus worker ingest');
  const values: Record<string, string> = {};
  for (let i = 0; i < flags.length; i += 2) {
    const flag = flags[i];
    if (
      !['--job', '--resource', '--index', '--completions', '--health-port'].includes(flag) ||
      flags[i + 1] === undefined
    ) {
      throw new WorkerUsageError(`unknown or incomplete option ${flag}`);
    }
    values[flag] = flags[i + 1];
  }
  const health = values['--health-port'];
  const healthPort = health === undefined ? undefined : count('--health-port', health, 1);
  if (healthPort !== undefined && healthPort > 65535) throw new WorkerUsageError('--health-port needs a port number');
  const probed = healthPort === undefined ? {} : { healthPort };
  const resource = values['--resource'];
  if (resource !== undefined) {
    const other = ['--job', '--index', '--completions'].find((flag) => values[flag] !== undefined);
    if (other) throw new WorkerUsageError(`--resource runs one long-running worker: ${other} does not apply`);
    const [namespace, name, extra] = resource.split('/');
    if (!namespace || !name || extra !== undefined || !NAME.test(namespace) || !NAME.test(name)) {
      throw new WorkerUsageError('--resource needs <namespace>/<name>');
    }
    return { worker, namespace, name, index: 0, completions: 1, ...probed };
  }
  const [namespace, name, extra] = (values['--job'] ?? '').split('/');
  if (!namespace || !name || extra !== undefined || !NAME.test(namespace) || !NAME.test(name)) {
    throw new WorkerUsageError('--job needs <namespace>/<name>');
  }
  const completions = values['--completions'] === undefined ? 1 : count('--completions', values['--completions'], 1);
  const index =
    values['--index'] !== undefined
      ? count('--index', values['--index'], 0)
      : completionIndex !== undefined
        ? completionIndex
        : 0;
  if (index >= completions) throw new WorkerUsageError(`--index ${index} is not below --completions ${completions}`);
  return { worker, namespace, name, index, completions, ...probed };
}

/**
 * Runs one worker shard to its end against the API server (KUBECONFIG, else in-cluster): resolves when the shard is
 * done, rejects when it cannot go on (the pod then fails and the Job retries it per backoffLimit). `signal` (SIGTERM)
 * stops it between items.
 */
export async function runWorker(
  args: string[],
  env: Record<string, string | undefined>,
  logger: Logger,
  starters: Record<string, WorkerStarter>,
  signal: AbortSignal,
  /** Where `--health-port` listens: every interface in a pod (the kubelet probes the pod IP). */
  healthHost = '0.0.0.0',
): Promise<void> {
  const settings = loadWorkerSettings(env);
  const invocation = parseWorkerArgs(args, settings.completionIndex);
  const start = starters[invocation.worker];
  if (!start) {
    throw new WorkerUsageError(`unknown worker ${invocation.worker} (known: ${Object.keys(starters).join(', ')})`);
  }
  const health = invocation.healthPort === undefined ? undefined : await serveHealth(invocation.healthPort, healthHost);
  try {
    const resources = new KubernetesResourceStore(loadKubeConfig(settings.kubeconfig, userAgent('worker')));
    const { worker, close } = await start(env, resources, logger);
    const { namespace, name, index, completions } = invocation;
    logger.info('worker shard starting', {
      worker: invocation.worker,
      job: `${namespace}/${name}`,
      index,
      completions,
    });
    try {
      await worker({ namespace, name, index, completions, signal });
      logger.info('worker shard done', { job: `${namespace}/${name}`, index });
    } finally {
      await close();
    }
  } finally {
    health?.closeAllConnections();
    health?.close();
  }
}

/** `GET /healthz` → 200; anything else 404. */
async function serveHealth(port: number, host: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const ok = req.method === 'GET' && req.url === '/healthz';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'text/plain' }).end(ok ? 'ok' : 'not found');
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
