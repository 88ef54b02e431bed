import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../services/lib/config/index.js';
import { loadClusterOperatorConfig, loadControllerSettings } from './config.js';

describe('operator configuration', () => {
  it('has documented defaults', () => {
    expect(loadControllerSettings({})).toEqual({
      ingest: { parallelism: 1, backoffLimit: 3, pendingDeadlineSeconds: 600 },
      retention: { count: 200, maxAgeSeconds: 604800 },
      captionRunRetention: { count: 100, maxAgeSeconds: 604800 },
      resyncSeconds: 300,
    });
  });

  it('reads every setting', () => {
    expect(
      loadControllerSettings({
        ARGUS_INGEST_PARALLELISM: '4',
        ARGUS_INGEST_BACKOFF_LIMIT: '0',
        ARGUS_INGEST_PENDING_DEADLINE_SECONDS: '120',
        ARGUS_JOB_RETENTION_COUNT: '10',
        ARGUS_JOB_RETENTION_SECONDS: '60',
        ARGUS_CAPTION_RUN_RETENTION_COUNT: '5',
        ARGUS_CAPTION_RUN_RETENTION_SECONDS: '3600',
        ARGUS_OPERATOR_RESYNC_SECONDS: '30',
      }),
    ).toEqual({
      ingest: { parallelism: 4, backoffLimit: 0, pendingDeadlineSeconds: 120 },
      retention: { count: 10, maxAgeSeconds: 60 },
      captionRunRetention: { count: 5, maxAgeSeconds: 3600 },
      resyncSeconds: 30,
    });
  });

  it('refuses bad values, listing every problem', () => {
    const error = (() => {
      try {
        return loadControllerSettings({ ARGUS_INGEST_PARALLELISM: '0', ARGUS_JOB_RETENTION_COUNT: 'many' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(2);
  });
});

describe('argus operator cluster settings', () => {
  const required = { ARGUS_WORKER_IMAGE: 'ghcr.io/argus-dev/argus:test' };

  it('watches every namespace when WATCH_NAMESPACE is unset or empty (the controller-runtime convention)', () => {
    expect(loadClusterOperatorConfig(required).kubernetes.watchNamespace).toBeUndefined();
    expect(loadClusterOperatorConfig({ ...required, WATCH_NAMESPACE: '' }).kubernetes.watchNamespace).toBeUndefined();
    expect(loadClusterOperatorConfig({ ...required, WATCH_NAMESPACE: 'team-a' }).kubernetes.watchNamespace).toBe(
      'team-a',
    );
  });

  it('refuses a WATCH_NAMESPACE that is not a namespace name, and a missing ARGUS_WORKER_IMAGE', () => {
    expect(() => loadClusterOperatorConfig({ WATCH_NAMESPACE: 'Team A' })).toThrow(
      /WATCH_NAMESPACE[\s\S]*ARGUS_WORKER_IMAGE|ARGUS_WORKER_IMAGE[\s\S]*WATCH_NAMESPACE/,
    );
  });

  it('places each worker apart when ARGUS_WORKER_POD_OVERRIDES says so, and refuses an unknown worker', () => {
    const worker = loadClusterOperatorConfig({
      ...required,
      ARGUS_WORKER_NODE_SELECTOR: '{"nvidia.com/gpu.present":"true"}',
      ARGUS_WORKER_POD_OVERRIDES: JSON.stringify({
        'camera-watcher': {
          nodeSelector: {},
          resources: {},
          serviceAccountName: 'rel-argus-camera-watcher',
          envFrom: 'configMap:rel-argus-camera-rules,secret:frigate',
        },
      }),
    }).kubernetes.worker;
    expect(worker.nodeSelector).toEqual({ 'nvidia.com/gpu.present': 'true' });
    expect(worker.overrides).toEqual({
      'camera-watcher': {
        nodeSelector: {},
        resources: {},
        serviceAccountName: 'rel-argus-camera-watcher',
        envFrom: [{ configMapRef: { name: 'rel-argus-camera-rules' } }, { secretRef: { name: 'frigate' } }],
      },
    });
    expect(loadClusterOperatorConfig(required).kubernetes.worker.overrides).toBeUndefined();
    // Variables from a Secret, the API keys file, extra volumes: each shape checked, a wrong one refused.
    const full = {
      image: 'argus:cuda',
      affinity: { nodeAffinity: {} },
      env: [
        { name: 'ARGUS_API_KEYS_FILE', value: '/keys/keys' },
        { name: 'VLM_API_KEY', valueFrom: { secretKeyRef: { name: 'vlm', key: 'api-key' } } },
      ],
      volumes: [
        { name: 'api-keys', secret: { secretName: 'keys', items: [{ key: 'k', path: 'keys' }] } },
        { name: 'extra-models', persistentVolumeClaim: { claimName: 'models', readOnly: true } },
      ],
      volumeMounts: [{ name: 'api-keys', mountPath: '/keys', readOnly: true }],
    };
    expect(
      loadClusterOperatorConfig({ ...required, ARGUS_WORKER_POD_OVERRIDES: JSON.stringify({ ingest: full }) })
        .kubernetes.worker.overrides,
    ).toEqual({ ingest: full });
    for (const wrong of [
      { env: [{ name: 'X', value: 'a', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] },
      { volumes: [{ name: 'tmp', secret: { secretName: 's' } }] },
      { volumes: [{ name: 'host', hostPath: { path: '/' } }] },
      { volumeMounts: [{ name: 'v', mountPath: 'relative' }] },
      // A mount of no volume, over the worker's own /tmp, or out of its volume: pods the API server refuses.
      { volumes: full.volumes, volumeMounts: [{ name: 'keys', mountPath: '/keys' }] },
      { volumes: full.volumes, volumeMounts: [{ name: 'api-keys', mountPath: '/tmp' }] },
      { volumes: full.volumes, volumeMounts: [{ name: 'api-keys', mountPath: '/keys', subPath: '../x' }] },
      { volumes: full.volumes, volumeMounts: [{ name: 'api-keys', mountPath: '/keys', subPath: '/etc' }] },
    ])
      expect(() =>
        loadClusterOperatorConfig({ ...required, ARGUS_WORKER_POD_OVERRIDES: JSON.stringify({ ingest: wrong }) }),
      ).toThrow(/ARGUS_WORKER_POD_OVERRIDES/);
    expect(() =>
      loadClusterOperatorConfig({ ...required, ARGUS_WORKER_POD_OVERRIDES: '{"camera":{"nodeSelector":{}}}' }),
    ).toThrow(/ARGUS_WORKER_POD_OVERRIDES/);
  });
});
