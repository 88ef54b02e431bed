/**
 * A client of caption-qa built only from its OpenAPI document (`npm run openapi` generates the types): type-checked by
 * `npm run typecheck`, so that a document a client cannot use fails the build.
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../.openapi/caption-qa.js';

/** Stores a caption with its frame, then asks a question (the answer streams as SSE text). */
export async function useCaptionQa(baseUrl: string): Promise<string> {
  const client = createClient<paths>({ baseUrl });
  const stored = await client.POST('/api/embeddings', {
    body: { image_data: '/9j/4AAQ', metadata: { result: 'a red car parks', camera: 'gate', timestamp: 1760000000 } },
  });
  if (stored.error) throw new Error(JSON.stringify(stored.error));
  const answer = await client.POST('/api/chat', {
    body: { input: 'what parked at the gate?' },
    parseAs: 'text',
  });
  if (answer.error) throw new Error(JSON.stringify(answer.error));
  return answer.data;
}
