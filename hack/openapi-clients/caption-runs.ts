/**
 * A client of caption-runs built only from its OpenAPI document (`npm run openapi` generates the types): type-checked
 * by `npm run typecheck`, so that a document a client cannot use fails the build.
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../.openapi/caption-runs.js';

/** Starts a caption run with an alert rule, lists the runs and stops the one started. */
export async function useCaptionRuns(baseUrl: string): Promise<number> {
  const client = createClient<paths>({ baseUrl });
  const started = await client.POST('/api/generate_captions_alerts', {
    body: { rtspUrl: 'rtsp://127.0.0.1:8554/gate', alerts: [{ name: 'car', captionContains: 'car' }] },
  });
  if (started.error) throw new Error(JSON.stringify(started.error));
  const runs = await client.GET('/api/generate_captions_alerts');
  if (runs.error) throw new Error(JSON.stringify(runs.error));
  await client.DELETE('/api/generate_captions_alerts/{run_id}', {
    params: { path: { run_id: started.data.runId ?? '' } },
  });
  return runs.data.length;
}
