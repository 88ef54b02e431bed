#!/usr/bin/env node
/**
 * The `argus` command line: `up` (every service embedded in one process), `serve <service>`, `models import`,
 * `operator` and `worker` (cluster mode).
 */
import { parseArgs } from 'node:util';
import Joi from 'joi';
import {
  ConfigError,
  ConfigErrors,
  loadConfig,
  loadConfigs,
  platformSettings,
  toPlatformConfig,
} from '../services/lib/config/index.js';
import type { ConfigPart, PlatformConfig } from '../services/lib/config/index.js';
import { createLogger } from '../services/lib/log/index.js';
import {
  loadMqttSettings,
  mqttSettings,
  openProcessBroker,
  shownBrokerUrl,
  type MqttSettings,
} from '../services/lib/mqtt/index.js';
import { setProcessComponent } from '../services/lib/user-agent/index.js';
import { CAMERA_WATCHER_WORKER, CAPTION_RUN_WORKER, INGEST_WORKER } from '../operator/api/index.js';
import { controllerEnvSchema, loadControllerSettings } from '../operator/config.js';
import type { ControllerSettings } from '../operator/controllers/index.js';
import type { WorkerStarter } from '../operator/worker-command.js';
import { SERVICES, type StartedService } from './services.js';

const COMMANDS = ['up', 'serve', 'models', 'dataprep', 'operator', 'worker', 'help'];

const USAGE = `usage: argus <command>

  up                    start every service embedded in this process
  serve <service>       start one service (${Object.keys(SERVICES).join(', ')})
  models import [--force]
                        import every model the services use into ARGUS_MODELS_DIR
  dataprep reembed [--bucket <name>]
                        bring dataprep's stored image vectors into its image descriptor (MM_DATAPREP_IMAGE_DESCRIPTOR),
                        video by video, replacing each video's vectors only once its new ones are complete
  operator              run the controllers against a Kubernetes API server (leader election, /healthz /readyz /metrics);
                        needs ARGUS_WORKER_IMAGE (the worker pods' image), also when run out of the cluster;
                        WATCH_NAMESPACE unset or empty: every namespace
  worker ${INGEST_WORKER} --job <namespace>/<name> [--index <i>] [--completions <n>]
                        run one shard of an IngestJob (index defaults to JOB_COMPLETION_INDEX)
  worker ${CAMERA_WATCHER_WORKER}|${CAPTION_RUN_WORKER} --resource <namespace>/<name>
                        run the worker of a CameraWatcher or CaptionRun until SIGTERM (a Deployment's pod);
                        either form: --health-port <port> answers GET /healthz there, for the pod's probes
  help, --help, -h      show this text

Settings come from the environment (see README.md); every problem is reported before anything starts.
`;

/** A command line Argus cannot run: the message says what was wrong (exit 2, with the usage). */
class UsageError extends Error {}

/** The positionals of `args`, refusing any flag that `flags` does not name. */
function parse(args: string[], flags: Record<string, { type: 'boolean' | 'string' }> = {}) {
  try {
    return parseArgs({ args, options: flags, strict: true, allowPositionals: true });
  } catch (error) {
    // node's messages name the flag ("Unknown option '--x'"); the advice after them is about scripts, not argus.
    const message = String((error as Error).message).split('. ')[0];
    throw new UsageError(message.charAt(0).toLowerCase() + message.slice(1));
  }
}

/** `what` must be one of `valid`; otherwise the usage error names it and lists them. */
function oneOf(kind: string, what: string | undefined, valid: string[]): string {
  if (what !== undefined && valid.includes(what)) return what;
  const given = what === undefined ? `a ${kind} is needed` : `unknown ${kind} '${what}'`;
  throw new UsageError(`${given}; one of: ${valid.join(', ')}`);
}

/** The platform's settings from `env`; an unknown name under `prefixes` is refused (`up`/`serve` refuse ARGUS_*). */
function platform(env: NodeJS.ProcessEnv = process.env, prefixes: string[] = []): PlatformConfig {
  return toPlatformConfig(loadConfig('argus', platformSettings.schema, env, prefixes));
}

/**
 * The platform's, the embedded operator's and every named service's settings, all validated before anything starts
 * (ConfigErrors lists every problem of every one); unknown ARGUS_* and service names are judged across them.
 */
async function configure(names: string[]) {
  const entries = await Promise.all(names.map((name) => SERVICES[name]()));
  const parts: ConfigPart[] = [
    { name: 'argus', settings: platformSettings, load: (env) => platform(env, platformSettings.prefixes) },
    {
      name: 'operator',
      settings: { schema: Joi.object(controllerEnvSchema), prefixes: [] },
      load: loadControllerSettings,
    },
    { name: 'mqtt', settings: mqttSettings, load: loadMqttSettings },
    ...names.map((name, i) => ({ name, settings: entries[i].settings, load: entries[i].loadConfig })),
  ];
  const [cfg, operatorConfig, mqtt, ...configs] = loadConfigs(process.env, parts);
  return {
    cfg: cfg as PlatformConfig,
    operatorConfig: operatorConfig as ControllerSettings,
    mqtt: mqtt as MqttSettings,
    services: names.map((name, i) => ({ name, entry: entries[i], config: configs[i] })),
  };
}

async function serve(names: string[]): Promise<void> {
  const { cfg, operatorConfig, mqtt, services } = await configure(names);
  // The User-Agent of this process's requests: argus-<service>, or argus-up for several.
  setProcessComponent(names.length === 1 ? names[0] : 'up');
  // Loaded once the configuration is valid: help, usage and configuration errors answer at once.
  const { onShutdownSignal } = await import('../services/lib/http/index.js');
  const { openServiceControlPlane } = await import('../operator/service-control-plane.js');
  const logger = createLogger({ service: 'argus', level: cfg.logLevel, json: cfg.logJson });
  // One control plane per process, opened before the services (they create and register on it).
  const plane = await openServiceControlPlane({
    mode: cfg.controlPlane,
    namespace: cfg.namespace,
    dataDir: cfg.dataDir,
    logger: createLogger({ service: 'operator', level: cfg.logLevel, json: cfg.logJson }),
    config: operatorConfig,
  });
  // One MQTT broker for the services that use one (MQTT_BROKER, else embedded here): what one publishes, all see.
  // In the cluster none is embedded: workers and replicas in other pods could not reach a broker in this one.
  const wantsBroker = services.some(({ entry }) => entry.mqtt) && (mqtt.brokerUrl || cfg.controlPlane === 'embedded');
  const broker = wantsBroker ? await openProcessBroker(mqtt) : undefined;
  const started: StartedService[] = [];
  const peers: Record<string, string> = {};
  // One deadline for every service, from the signal: they stop side by side.
  onShutdownSignal(
    logger,
    async (stop) => {
      // Workers use what the services opened, so they stop first; their unfinished items run again after a restart.
      await plane.stopWork();
      const results = await Promise.allSettled(started.map((service) => service.close(stop)));
      await broker?.close();
      await plane.close();
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    },
    cfg.shutdownGraceMs,
  );
  for (const { name, entry, config } of services) {
    const serviceLogger = createLogger({ service: name, level: cfg.logLevel, json: cfg.logJson });
    started.push(
      await entry.start(config, {
        env: process.env,
        logger: serviceLogger,
        controlPlane: plane.controlPlane,
        mqttBroker: entry.mqtt ? broker?.url : undefined,
        peers: { ...peers },
      }),
    );
    peers[name] = started[started.length - 1].url;
  }
  // Controllers start once every service registered its workers, so no workload waits for a missing one.
  await plane.startControllers();
  // The pid is what `kill <pid>` needs (npm start runs this process in its place: `exec`).
  logger.info('argus is up', {
    services: names,
    controlPlane: cfg.controlPlane,
    namespace: cfg.namespace,
    mqtt: broker && `${broker.embedded ? 'embedded' : 'external'} (${shownBrokerUrl(broker.url)})`,
    pid: process.pid,
  });
}

async function operator(): Promise<void> {
  const cfg = platform();
  setProcessComponent('operator');
  const logger = createLogger({ service: 'operator', level: cfg.logLevel, json: cfg.logJson });
  // Loaded only here: the embedded commands never pay for the Kubernetes client.
  const { startOperator } = await import('../operator/main.js');
  // Loaded before the start, so the handler is in place by the time this replica can lead (no await in between).
  const { onShutdownSignal } = await import('../services/lib/http/index.js');
  const running = await startOperator(process.env, logger);
  onShutdownSignal(logger, () => running.close(), cfg.shutdownGraceMs);
}

async function worker(args: string[]): Promise<void> {
  const cfg = platform();
  setProcessComponent('worker');
  const logger = createLogger({ service: 'worker', level: cfg.logLevel, json: cfg.logJson });
  const { runWorker, WorkerUsageError } = await import('../operator/worker-command.js');
  // SIGTERM (pod deletion, eviction) stops the shard between items; what it left undone runs again on a retry.
  const stop = new AbortController();
  // `on`, not `once`: a second signal (npm forwards one, people press Ctrl-C twice) must not fall back to Node's
  // default action and kill the shard mid-item; it is logged and the first signal's stop goes on.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stop.signal.aborted) return logger.info('already stopping: signal ignored', { signal });
      logger.info('stopping after the item in progress', { signal });
      stop.abort();
    });
  }
  const starters: Record<string, WorkerStarter> = {
    [INGEST_WORKER]: async (env, resources, log) => {
      const { startIngestWorker } = await import('../services/dataprep/ingest-worker/start-ingest-worker.js');
      return startIngestWorker(env as NodeJS.ProcessEnv, resources, log);
    },
    [CAMERA_WATCHER_WORKER]: async (env, resources, log) => {
      const { startCameraWatcherWorker } = await import('../services/camera-rules/watcher/start-camera-watcher.js');
      return startCameraWatcherWorker(env as NodeJS.ProcessEnv, resources, log);
    },
    [CAPTION_RUN_WORKER]: async (env, resources, log) => {
      const { startCaptionWorker } = await import('../services/caption-runs/worker/start-caption-worker.js');
      return startCaptionWorker(env as NodeJS.ProcessEnv, resources, log);
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

async function importModels(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { force: { type: 'boolean' } });
  noPositionals(positionals);
  const cfg = platform();
  const logger = createLogger({ service: 'argus', level: cfg.logLevel, json: cfg.logJson });
  const { defaultModels, importDefaultModels, multiPoseModel } =
    await import('../services/lib/inference/import/index.js');
  // Every model a service uses, so that a machine can be prepared before it goes offline.
  const models = [...defaultModels, multiPoseModel];
  const imported = await importDefaultModels(cfg.modelsDir, {
    force: values.force === true,
    log: (m) => logger.info(m),
    models,
  });
  logger.info('models ready', { dir: cfg.modelsDir, models: models.map((m) => m.name), imported });
}

async function dataprep(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  oneOf('dataprep command', sub, ['reembed']);
  const { values, positionals } = parse(rest, { bucket: { type: 'string' } });
  noPositionals(positionals);
  const { loadDataprepConfig } = await import('../services/dataprep/config.js');
  const config = loadDataprepConfig(process.env);
  setProcessComponent('dataprep');
  const logger = createLogger({ service: 'dataprep', level: config.platform.logLevel, json: config.platform.logJson });
  const { runReembed } = await import('../services/dataprep/reembed/reembed-command.js');
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  const failed = await runReembed(config, logger, {
    bucketName: values.bucket as string | undefined,
    signal: stop.signal,
  });
  process.exit(failed ? 1 : 0);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'help' || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
  switch (oneOf('command', command, COMMANDS)) {
    case 'up':
      noPositionals(parse(rest).positionals);
      return serve(Object.keys(SERVICES));
    case 'serve': {
      const { positionals } = parse(rest);
      const name = oneOf('service', positionals[0], Object.keys(SERVICES));
      noPositionals(positionals.slice(1));
      return serve([name]);
    }
    case 'models': {
      const [sub, ...args] = rest;
      oneOf('models command', sub, ['import']);
      return importModels(args);
    }
    case 'dataprep':
      return dataprep(rest);
    case 'operator':
      noPositionals(parse(rest).positionals);
      return operator();
    case 'worker':
      return worker(rest);
  }
}

/** Arguments a command does not take are refused, never ignored. */
function noPositionals(extra: string[]): void {
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError) {
    process.stderr.write(`argus: ${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (err instanceof ConfigError || err instanceof ConfigErrors) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`argus: ${err?.message ?? err}\n`);
  process.exit(1);
});
