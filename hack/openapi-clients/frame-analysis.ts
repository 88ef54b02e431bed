/**
 * A client of frame-analysis built only from its OpenAPI document (`npm run openapi` generates the types):
 * type-checked by `npm run typecheck`, so that a document a client cannot use fails the build.
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../.openapi/frame-analysis.js';

/** Sends frames of one entity as Blobs in a multipart body and reads the matched pattern. */
export async function useFrameAnalysis(baseUrl: string, frames: Blob[]): Promise<string | undefined> {
  const client = createClient<paths>({ baseUrl });
  const analysed = await client.POST('/api/v1/analyze/batch', {
    body: { entity_id: 'person-7', frames },
    bodySerializer: (body) => {
      const form = new FormData();
      form.append('entity_id', body.entity_id);
      body.frames.forEach((frame, i) => form.append('frames', frame, `frame-${i}.jpg`));
      return form;
    },
  });
  if (analysed.error) throw new Error(JSON.stringify(analysed.error));
  const health = await client.GET('/api/v1/health');
  return health.data?.vlm.circuit ?? analysed.data.status;
}
