/**
 * A process running the embedded control plane with a slow ingest worker, for the restart test:
 * `restart-fixture.ts <dataDir> <markerFile>`. Each item appends `start <i>` to the marker file (and stdout) before
 * its work and `done <i>` after it. With BLOCK_AT_ITEM=<i> the worker never finishes item i (the test kills the
 * process there). The process exits 0 once every IngestJob in namespace default is finished, printing `finished
 * <name> <state>`.
 */
import { appendFileSync } from 'node:fs';
import { INGEST_WORKER, TERMINAL_INGEST_STATES, type IngestState } from '../api/index.js';
import { itemWorker } from '../controllers/ingestjob/testing/item-worker.js';
import { openEmbeddedControlPlane } from '../embedded-control-plane.js';
import { createLogger } from '../../services/lib/log/index.js';

const [dataDir, marker] = process.argv.slice(2);
const blockAt = process.env.BLOCK_AT_ITEM;
const logger = createLogger({ service: 'restart-fixture', level: 'warn', json: true });

const plane = await openEmbeddedControlPlane({
  dataDir,
  namespace: 'default',
  logger,
  config: {
    ingest: { parallelism: 1, backoffLimit: 0, pendingDeadlineSeconds: 600 },
    retention: { count: 100, maxAgeSeconds: 86400 },
    captionRunRetention: { count: 100, maxAgeSeconds: 86400 },
    resyncSeconds: 3600,
  },
});
const { resources } = plane.controlPlane;
plane.controlPlane.registerWorker(
  INGEST_WORKER,
  itemWorker(resources, async (_item, index) => {
    appendFileSync(marker, `start ${index}\n`);
    process.stdout.write(`start ${index}\n`);
    if (String(index) === blockAt) await new Promise(() => undefined);
    appendFileSync(marker, `done ${index}\n`);
    return { status: 'success', embeddingsCount: 1 };
  }),
);
await plane.startControllers();

let finishing = false;
await resources.watch('IngestJob', 'default', () => {
  void resources.list('IngestJob', 'default').then(async (jobs) => {
    const finished = jobs.every((job) => TERMINAL_INGEST_STATES.includes(job.status?.state as IngestState));
    if (!finished || finishing) return;
    finishing = true;
    await plane.close();
    for (const job of jobs) process.stdout.write(`finished ${job.metadata.name} ${job.status?.state}\n`);
    process.exit(0);
  });
});
