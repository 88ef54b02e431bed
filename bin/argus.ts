#!/usr/bin/env node
/**
 * The `argus` command line: `up` (every service embedded in one process), `serve <service>`, `models import`,
 * `operator` and `worker` (cluster mode).
 */
import { ConfigError, loadConfig, platformEnvSchema, toPlatformConfig } from '../services/lib/config/index.js';
import type { PlatformConfig } from '../services/lib/config/index.js';
import Joi from 'joi';
import { onShutdownSignal } from '../services/lib/http/index.js';
import { defaultModels, importDefaultModels, multiPoseModel } from '../services/lib/inference/import/index.js';
import { createLogger } from '../services/lib/log/index.js';
import { loadOperatorConfig } from '../operator/config.js';
import { openServiceControlPlane } from '../operator/service-control-plane.js';
import type { WorkerStarter } from '../operator/worker-command.js';
import { SERVICES, type StartedService } from './services.js';

const USAGE = `usage: argus <command>

  up                    start every service embedded in this process
  serve <service>       start one service (${Object.keys(SERVICES).join(', ')})
  models import [--force]
                        import every model the services use into ARGUS_MODELS_DIR
  operator              run the controllers against a Kubernetes API server (leader election, /healthz /readyz /metrics)
  worker ingest --job <namespace>/<name> [--index <i>] [--completions <n>]
                        run one shard of an IngestJob (index defaults to JOB_COMPLETION_INDEX)
`;

function platform(): PlatformConfig {
  return toPlatformConfig(loadConfig('argus', Joi.object(platformEnvSchema), process.env));
}

async function serve(names: string[]): Promise<void> {
  const cfg = platform();
  const logger = createLogger({ service: 'argus', level: cfg.logLevel, json: cfg.logJson });
  // One control plane per process, opened before the services (they create and register on it).
  const plane = await openServiceControlPlane({
    mode: cfg.controlPlane,
    namespace: cfg.namespace,
    dataDir: cfg.dataDir,
    logger: createLogger({ service: 'operator', level: cfg.logLevel, json: cfg.logJson }),
    config: loadOperatorConfig(process.env),
  });
  const started: StartedService[] = [];
  // One deadline for every service, from the signal: they stop side by side.
  onShutdownSignal(
    logger,
    async (stop) => {
      // Workers use what the services opened, so they stop first; their unfinished items run again after a restart.
      await plane.stopWork();
      const results = await Promise.allSettled(started.map((service) => service.close(stop)));
      await plane.close();
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    },
    cfg.shutdownGraceMs,
  );
  for (const name of names) {
    const start = await SERVICES[name]();
    const serviceLogger = createLogger({ service: name, level: cfg.logLevel, json: cfg.logJson });
    started.push(await start(process.env, serviceLogger, plane.controlPlane));
  }
  // Controllers start once every service registered its workers, so no workload waits for a missing one.
  await plane.startControllers();
  // The pid is what `kill <pid>` needs (npm start runs this process in its place: `exec`).
  logger.info('argus is up', {
    services: names,
    controlPlane: cfg.controlPlane,
    namespace: cfg.namespace,
    pid: process.pid,
  });
}

async function operator(): Promise<void> {
  const cfg = platform();
  const logger = createLogger({ service: 'operator', level: cfg.logLevel, json: cfg.logJson });
  // Loaded only here: the embedded commands never pay for the Kubernetes client.
  const { startOperator } = await import('../operator/main.js');
  const running = await startOperator(process.env, logger);
  onShutdownSignal(logger, () => running.close(), cfg.shutdownGraceMs);
}

async function worker(args: string[]): Promise<void> {
  const cfg = platform();
  const logger = createLogger({ service: 'worker', level: cfg.logLevel, json: cfg.logJson });
  const { runWorker, WorkerUsageError } = await import('../operator/worker-command.js');
  // SIGTERM (pod deletion, eviction) stops the shard between items; what it left undone runs again on a retry.
  const stop = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stop.abort());
  const starters: Record<string, WorkerStarter> = {
    ingest: async (env, resources, log) => {
      const { startIngestWorker } = await import('../services/dataprep/ingest-worker/start-ingest-worker.js');
      return startIngestWorker(env as NodeJS.ProcessEnv, resources, log);
    },
  };
  try {
    await runWorker(args, process.env, logger, starters, stop.signal);
  } catch (error) {
    if (!(error instanceof WorkerUsageError)) throw error;
    process.stderr.write(`argus worker: ${error.message}\n${USAGE}`);
    process.exit(2);
  }
  // Exit now that the shard is done, whatever the libraries left open: the Job counts this pod as succeeded.
  process.exit(0);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'up') return serve(Object.keys(SERVICES));
  if (command === 'serve' && rest.length === 1 && rest[0] in SERVICES) return serve(rest);
  if (command === 'operator' && rest.length === 0) return operator();
  if (command === 'worker') return worker(rest);
  if (command === 'models' && rest[0] === 'import') {
    const cfg = platform();
    const logger = createLogger({ service: 'argus', level: cfg.logLevel, json: cfg.logJson });
    // Every model a service uses, so that a machine can be prepared before it goes offline.
    const models = [...defaultModels, multiPoseModel];
    const imported = await importDefaultModels(cfg.modelsDir, {
      force: rest.includes('--force'),
      log: (m) => logger.info(m),
      models,
    });
    logger.info('models ready', { dir: cfg.modelsDir, models: models.map((m) => m.name), imported });
    return;
  }
  process.stderr.write(USAGE);
  process.exitCode = 2;
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`argus: ${err?.message ?? err}\n`);
  process.exit(1);
});
