import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { loadControllerSettings } from '../../../operator/config.js';
import { openEmbeddedControlPlane, type ControlPlaneHandle } from '../../../operator/embedded-control-plane.js';
import { DEFAULT_MODEL_NAMES } from '../../lib/inference/index.js';
import { createLogger, type Logger } from '../../lib/log/index.js';
import type { SharedState } from '../../lib/shared-state/index.js';
import { createApp, type CaptionRunsDeps } from '../app.js';
import { MetadataRelay, type RelayTimers } from '../relay/metadata-relay.js';
import { CredentialSealer } from '../runs/stream-credentials.js';

/** A served app on 127.0.0.1 over an embedded control plane under a temp dir, and its parts. */
export interface ServedRuns {
  url: string;
  api: string;
  dataDir: string;
  plane: ControlPlaneHandle;
  /** The app's relay: tests hand it MQTT messages (or connect it to a broker). */
  relay: MetadataRelay;
  /** What sealed the runs' stream passwords (workers in tests open them with it); undefined when refused. */
  credentials?: CredentialSealer;
  logger: Logger;
  /** Serves the app again over a control plane reopened on the same data dir (a restart of the process). */
  restart(): Promise<void>;
  /**
   * Serves another replica of the app over the same control plane (the resources every replica shares), this one and
   * the first starting runs through `sharedState`'s claims; answers its API root. Closed with the first.
   */
  replica(sharedState: SharedState): Promise<string>;
  close(): Promise<void>;
}

/** Test support: an embedded control plane (the store persisted under `dataDir`; no controller started). */
export function openTestControlPlane(dataDir: string, logger: Logger): Promise<ControlPlaneHandle> {
  return openEmbeddedControlPlane({ dataDir, namespace: 'default', logger, config: loadControllerSettings({}) });
}

/** Test support: serves caption-runs over a fresh embedded control plane; `config` overrides the defaults. */
export async function serveRuns(
  overrides: {
    config?: Partial<CaptionRunsDeps['config']>;
    resolveHost?: CaptionRunsDeps['resolveHost'];
    sharedState?: SharedState;
    /** null: no key (a cluster without CAPTION_RUNS_CREDENTIALS_KEY); default: a random key. */
    credentials?: CredentialSealer | null;
    /** false: no broker configured (a cluster without MQTT_BROKER). */
    canPublish?: boolean;
    relay?: { bufferMessages?: number; idleMs?: number; timers?: RelayTimers; clock?: () => number };
  } = {},
): Promise<ServedRuns> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'caption-runs-'));
  const logger = createLogger({ service: 'caption-runs-test', level: 'error', json: true });
  const modelsDir = await ensureDefaultModels();
  let plane: ControlPlaneHandle;
  let server: http.Server;
  let relay: MetadataRelay;
  const credentials =
    overrides.credentials === null ? undefined : (overrides.credentials ?? new CredentialSealer(randomBytes(32)));
  const start = async () => {
    plane = await openTestControlPlane(dataDir, logger);
    relay = new MetadataRelay({ bufferMessages: 64, idleMs: 1000, ...overrides.relay });
    const { app } = createApp({
      logger,
      controlPlane: plane.controlPlane,
      relay,
      config: { modelsDir, defaultDetector: DEFAULT_MODEL_NAMES.detector, ...overrides.config },
      resolveHost: overrides.resolveHost,
      sharedState: overrides.sharedState,
      credentials,
      canPublish: overrides.canPublish,
    });
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  };
  const replicas: http.Server[] = [];
  const stop = async () => {
    for (const replica of replicas.splice(0)) {
      replica.closeAllConnections();
      await new Promise<void>((resolve) => replica.close(() => resolve()));
    }
    relay.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await plane.close();
  };
  await start();
  const served: ServedRuns = {
    url: '',
    api: '',
    dataDir,
    logger,
    credentials,
    get plane() {
      return plane;
    },
    get relay() {
      return relay;
    },
    restart: async () => {
      await stop();
      await start();
      setUrls();
    },
    replica: async (sharedState) => {
      const { app } = createApp({
        logger,
        controlPlane: plane.controlPlane,
        relay: new MetadataRelay({ bufferMessages: 64, idleMs: 1000, ...overrides.relay }),
        config: { modelsDir, defaultDetector: DEFAULT_MODEL_NAMES.detector, ...overrides.config },
        resolveHost: overrides.resolveHost,
        sharedState,
        credentials,
      });
      const replica = http.createServer(app.callback());
      replicas.push(replica);
      await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(replica.address() as AddressInfo).port}/api`;
    },
    close: async () => {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  const setUrls = () => {
    served.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    served.api = `${served.url}/api`;
  };
  setUrls();
  return served;
}

/** Test support: sends a JSON body. */
export function sendJson(url: string, body: unknown, method = 'POST'): Promise<Response> {
  return fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
