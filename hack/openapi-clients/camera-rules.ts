/**
 * A client of camera-rules built only from its OpenAPI document (`npm run openapi` generates the types): type-checked
 * by `npm run typecheck`, so that a document a client cannot use fails the build.
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../.openapi/camera-rules.js';

/** Adds a rule, lists the rules and the cameras, and reads the service's health. */
export async function useCameraRules(baseUrl: string): Promise<string> {
  const client = createClient<paths>({ baseUrl });
  const added = await client.POST('/rules/', { body: { id: 'r1', label: 'person', action: 'alert', camera: 'gate' } });
  if (added.error) throw new Error(JSON.stringify(added.error));
  const rules = await client.GET('/rules/');
  const cameras = await client.GET('/cameras');
  const health = await client.GET('/health');
  return `${rules.data?.length ?? 0} rules, ${cameras.data?.length ?? 0} cameras, ${health.data?.status ?? 'down'}`;
}
