import type { ActionRequest } from '../dispatch/types.js';

/** A valid ActionRequest for tests: a YES on cam-1's intrusion alert with the schema's defaults, then `over`. */
export function actionRequest(over: Partial<ActionRequest> = {}): ActionRequest {
  return {
    event_id: 'e1',
    source_id: 'cam-1',
    alert_name: 'intrusion',
    answer: 'YES',
    reason: '',
    consecutive_count: 1,
    escalated: false,
    payloads: [],
    ...over,
  };
}
