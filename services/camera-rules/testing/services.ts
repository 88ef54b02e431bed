import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { loadAlertDispatchConfig } from '../../alert-dispatch/config.js';
import { startAlertDispatch } from '../../alert-dispatch/main.js';
import { loadDataprepConfig } from '../../dataprep/config.js';
import { startDataprep } from '../../dataprep/main.js';
import { createLogger } from '../../lib/log/index.js';

/** Real dataprep and alert-dispatch, started in-process on 127.0.0.1 (tests may wire several services). */
export interface PeerServices {
  /** dataprep's API root (`…/v1/dataprep`). */
  dataprep: string;
  /** alert-dispatch's API root (`…/api/v1`). */
  alertDispatch: string;
  /** Where alert-dispatch's capture_snapshot writes. */
  snapshotDir: string;
  close(): Promise<void>;
}

/** Starts both with the default models, their state in a temp dir. */
export async function startPeerServices(): Promise<PeerServices> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-peers-'));
  const snapshotDir = path.join(dir, 'alert-snapshots');
  await mkdir(snapshotDir, { recursive: true });
  const logger = createLogger({ service: 'peers-test', level: 'error', json: true });
  logger.silent = true;
  const env = {
    ARGUS_DATA_DIR: dir,
    ARGUS_MODELS_DIR: await ensureDefaultModels(),
    ARGUS_ORT_THREADS: '1',
    MM_DATAPREP_HOST_PORT: '0',
    ALERT_DISPATCH_PORT: '0',
    ALERT_SNAPSHOT_DIR: snapshotDir,
  };
  const dataprep = await startDataprep(loadDataprepConfig(env), logger);
  const alerts = await startAlertDispatch(loadAlertDispatchConfig(env), env, logger).catch(async (error) => {
    await dataprep.close();
    throw error;
  });
  return {
    dataprep: `${dataprep.url}/v1/dataprep`,
    alertDispatch: `${alerts.url}/api/v1`,
    snapshotDir,
    close: async () => {
      await alerts.close();
      await dataprep.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
