/**
 * A client of dataprep built only from its OpenAPI document (`npm run openapi` generates the types): type-checked by
 * `npm run typecheck`, so that a document a client cannot use fails the build.
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../.openapi/dataprep.js';

/** Uploads a video as a Blob, searches by words with free-form metadata filters and lists the bucket. */
export async function useDataprep(baseUrl: string, video: Blob): Promise<string[]> {
  const client = createClient<paths>({ baseUrl });
  const uploaded = await client.POST('/v1/dataprep/media/upload', {
    params: { query: { bucket_name: 'clips', tags: ['gate'] } },
    body: { file: video },
    bodySerializer: (body) => {
      const form = new FormData();
      form.append('file', body.file, 'gate.mp4');
      return form;
    },
  });
  if (uploaded.error) throw new Error(uploaded.error.message);
  const found = await client.POST('/v1/dataprep/search', {
    body: { query: 'a bus on the left', metadata: { camera: 'gate', lane: [1, 2] }, top_k: 5 },
  });
  if (found.error) throw new Error(found.error.message);
  const listed = await client.GET('/v1/dataprep/media', { params: { query: { bucket_name: 'clips' } } });
  if (listed.error) throw new Error(listed.error.message);
  return [uploaded.data.video_id ?? '', ...(found.data.hits ?? []).map((hit) => hit.video_id ?? '')];
}
