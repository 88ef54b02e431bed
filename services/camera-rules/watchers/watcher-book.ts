import { API_VERSION as RESOURCE_API_VERSION, type CameraWatcher } from '../../../operator/api/index.js';
import { AlreadyExistsError, updateWithRetry, type ResourceStore } from '../../../operator/ports/index.js';
import type { Logger } from '../../lib/log/index.js';
import { objectNameFor } from '../resource-name.js';

/** The CameraWatcher object name of a camera (see objectNameFor). */
export function watcherObjectName(camera: string): string {
  return objectNameFor(camera, 'camera');
}

/** The watcher store did not answer while writing (503); the cause is logged, never sent. */
export class WatcherStoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('The watcher store (control plane) is unavailable', { cause });
    this.name = 'WatcherStoreUnavailableError';
  }
}

/** The mapping as GET /watchers/mapping answers it. */
export interface WatcherMapping {
  mapping: Record<string, boolean>;
  warning?: string;
}

/**
 * The per-camera watchers, kept as CameraWatcher resources (`spec.camera`, `spec.enabled`) in the control plane's
 * store, which the CameraWatcher controller turns into one watcher workload per enabled camera. This replica's own
 * writes are kept as runtime overrides: they fill in cameras a store listing does not show yet (a cache behind its
 * writes) and are the whole answer, with a warning, when the store cannot be read.
 */
export class WatcherBook {
  private readonly overrides = new Map<string, boolean>();

  constructor(
    private readonly store: ResourceStore,
    private readonly namespace: string,
    private readonly logger: Logger,
  ) {}

  /** Sets each camera's watcher on or off (creating its resource when needed); resolves once all are written. */
  async set(cameras: Map<string, boolean>): Promise<void> {
    for (const [camera, enabled] of cameras) {
      try {
        await this.write(camera, enabled);
      } catch (error) {
        this.logger.error('watcher store write failed', { camera, error: (error as Error)?.message ?? String(error) });
        throw new WatcherStoreUnavailableError(error);
      }
      this.overrides.set(camera, enabled);
    }
  }

  private async write(camera: string, enabled: boolean): Promise<void> {
    const name = watcherObjectName(camera);
    for (;;) {
      const written = await updateWithRetry(this.store, 'CameraWatcher', this.namespace, name, (latest) =>
        latest.spec.enabled === enabled ? undefined : { ...latest, spec: { ...latest.spec, enabled } },
      );
      if (written) return;
      try {
        await this.store.create('CameraWatcher', {
          apiVersion: RESOURCE_API_VERSION,
          kind: 'CameraWatcher',
          metadata: {
            name,
            namespace: this.namespace,
            labels: { 'app.kubernetes.io/managed-by': 'camera-rules' },
          },
          spec: { camera, enabled },
        });
        return;
      } catch (error) {
        // Another replica created it meanwhile: update that one.
        if (!(error instanceof AlreadyExistsError)) throw error;
      }
    }
  }

  /** The persisted mapping merged with this replica's runtime overrides; `warning` when the store could not be read. */
  async mapping(): Promise<WatcherMapping> {
    let watchers: CameraWatcher[];
    try {
      watchers = await this.store.list('CameraWatcher', this.namespace);
    } catch (error) {
      const why = (error as Error)?.message ?? String(error);
      this.logger.warn('watcher store lookup failed', { error: why });
      return {
        mapping: Object.fromEntries(this.overrides),
        warning:
          'The watcher store (control plane) could not be read; the mapping shows only the changes this replica ' +
          'made since it started',
      };
    }
    const persisted = Object.fromEntries(
      watchers
        .sort((a, b) => a.spec.camera.localeCompare(b.spec.camera))
        .map((watcher) => [watcher.spec.camera, watcher.spec.enabled]),
    );
    for (const [camera, enabled] of this.overrides) {
      if (!(camera in persisted)) persisted[camera] = enabled;
    }
    return { mapping: persisted };
  }
}
