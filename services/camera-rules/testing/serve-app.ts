import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedResourceStore } from '../../../operator/drivers/embedded/index.js';
import { createLogger, type Logger } from '../../lib/log/index.js';
import { createApp, type CameraRulesDeps } from '../app.js';
import type { Probe } from '../health/reachability.js';
import { DirectoryRecorder } from '../recorder/directory-recorder.js';
import { RuleBook } from '../rules/rule-book.js';
import { WatcherBook } from '../watchers/watcher-book.js';

/** A probe that always answers `reachable`, for tests that are not about a dependency. */
export const answering =
  (reachable = true, detail = reachable ? 'answers' : 'does not answer'): Probe =>
  async () => ({ reachable, detail });

/** A served app on 127.0.0.1 and its parts. */
export interface ServedCameraRules {
  url: string;
  deps: CameraRulesDeps;
  logger: Logger;
  /** Scratch directory of this app (the default recordings directory is `<dir>/recordings`). */
  dir: string;
  close(): Promise<void>;
}

/** Serves an http.Server for a Koa callback on an ephemeral loopback port. */
export async function serveOnLoopback(
  callback: http.RequestListener,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(callback);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Test namespace of the resources the tests write. */
export const TEST_NAMESPACE = 'cameras';

/**
 * Test support: camera-rules over an empty recordings directory and an embedded resource store in a temp dir (or
 * `controlPlaneDir`, which outlives the app: a restart), dependencies answering, any dep overridden.
 */
export async function serveCameraRules(
  overrides: Partial<CameraRulesDeps> & { controlPlaneDir?: string } = {},
): Promise<ServedCameraRules & { store: EmbeddedResourceStore }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-'));
  const logger = overrides.logger ?? createLogger({ service: 'camera-rules-test', level: 'error', json: true });
  const { controlPlaneDir, ...given } = overrides;
  const store = await EmbeddedResourceStore.open({ dir: controlPlaneDir ?? path.join(dir, 'control-plane') });
  const deps: CameraRulesDeps = {
    logger,
    recorder: new DirectoryRecorder(path.join(dir, 'recordings')),
    rules: new RuleBook(store, TEST_NAMESPACE, logger),
    watchers: new WatcherBook(store, TEST_NAMESPACE, logger),
    search: answering(),
    alerts: answering(),
    ...given,
  };
  const { app } = createApp(deps);
  const served = await serveOnLoopback(app.callback());
  return {
    url: served.url,
    deps,
    logger,
    dir,
    store,
    close: async () => {
      await served.close();
      await deps.recorder.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
