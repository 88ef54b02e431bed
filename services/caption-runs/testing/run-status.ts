import type { CaptionRun } from '../../../operator/api/index.js';
import type { ResourceStore } from '../../../operator/ports/index.js';
import { runResourceName } from '../runs/run-ids.js';

/** Resolves with the run once its status satisfies `done` (a watch on the store: no polling, no sleeps). */
export async function statusReaches(
  store: ResourceStore,
  runId: string,
  done: (run: CaptionRun) => boolean,
): Promise<CaptionRun> {
  let resolve!: (run: CaptionRun) => void;
  const reached = new Promise<CaptionRun>((r) => (resolve = r));
  const watch = await store.watch('CaptionRun', 'default', (event) => {
    if (event.object.metadata.name === runResourceName(runId) && done(event.object)) resolve(event.object);
  });
  try {
    return await reached;
  } finally {
    await watch.stop();
  }
}
