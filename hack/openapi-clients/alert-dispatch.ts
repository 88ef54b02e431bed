/**
 * A client of alert-dispatch built only from its OpenAPI document (`npm run openapi` generates the types):
 * type-checked by `npm run typecheck`, so that a document a client cannot use fails the build.
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../.openapi/alert-dispatch.js';

/** Sends an alert with payloads and per-tool arguments (the contract's own example), then asks for an action. */
export async function useAlertDispatch(baseUrl: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl });
  const alert = await client.POST('/api/v1/alerts', {
    body: {
      source_id: 'cam-1',
      alert_name: 'intrusion',
      metadata: { zone: 'gate', confidence: 0.9 },
      payloads: [
        { kind: 'text', data_text: 'a person at the gate' },
        { kind: 'image', mime_type: 'image/jpeg', data_base64: '/9j/4AAQ', metadata: { frame: 12 } },
      ],
      tool_arguments: { trigger_webhook: { url: 'http://127.0.0.1:9000/hook' } },
    },
  });
  if (alert.error) throw new Error(alert.error.detail);
  const action = await client.POST('/api/v1/actions/execute', {
    body: { source_id: 'cam-1', alert_name: 'intrusion', event_id: 'evt-1', reason: 'a person', answer: 'YES' },
  });
  if (action.error) throw new Error(action.error.detail);
  const tools = await client.GET('/api/v1/tools');
  if (tools.error) throw new Error(tools.error.detail);
  return [...(action.data.actions_taken ?? []), String(action.data.suppressed ?? 'ran')];
}
