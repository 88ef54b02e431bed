import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import { isoWithOffset, type Clock } from '../dispatch/clock.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import { fastActionRequest } from '../dispatch/fast-action-request.js';
import { normaliseFlexibleAlert } from '../dispatch/normalise-alert.js';
import { actionRequestSchema, flexibleAlertSchema } from '../dispatch/schemas.js';
import type { ActionRequest } from '../dispatch/types.js';
import { randomUUID } from 'node:crypto';
import { API_PREFIX } from './api-prefix.js';
import { actionResponseBody, errorBody, flexibleAlertResponseBody } from './response-schemas.js';

const validationError = { description: 'A field is invalid (every invalid field is listed)', schema: errorBody };
const tooLarge = { description: 'Body larger than the configured limit', schema: errorBody };

/** POST /alerts (flexible, answered 202 before the tools run) and POST /actions/execute (answered 200 after). */
export function dispatchRoutes(dispatcher: Dispatcher, clock: Clock): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: `${API_PREFIX}/alerts`,
      summary: 'Flexible JSON alert ingestion',
      description:
        'Any JSON object; recognised fields are type-checked and mapped onto an action request (alert_type ' +
        'defaults to UNKNOWN, source_id to unknown, alert_name to alert_type, answer to YES). Unrecognised fields ' +
        'are kept in metadata. Answered 202 as soon as the alert is accepted; the dispatch runs in the background ' +
        'and its result is published as an `alert_action` event.',
      tags: ['dispatch'],
      request: { body: flexibleAlertSchema },
      responses: {
        202: { description: 'Accepted for dispatch', schema: flexibleAlertResponseBody },
        413: tooLarge,
        422: validationError,
      },
      handler: (ctx) => {
        const request = normaliseFlexibleAlert(ctx.state.body, () => isoWithOffset(clock()));
        dispatcher.dispatchInBackground(request);
        const ts = Date.parse(request.timestamp!);
        ctx.status = 202;
        ctx.body = {
          status: 'accepted',
          alert_type: ctx.state.body.alert_type,
          timestamp: Number.isNaN(ts) ? request.timestamp : isoWithOffset(ts),
          event_id: request.event_id,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${API_PREFIX}/actions/execute`,
      summary: 'Dispatch an action request',
      description:
        'Runs the dispatch rules (answer NO and dedup hits run nothing; tools from the request, the subscription, ' +
        'else log_alert; escalation adds tools; capture_snapshot first) and answers 200 once every tool has finished.',
      tags: ['dispatch'],
      request: { body: actionRequestSchema, fastBody: fastActionRequest },
      responses: {
        200: { description: 'Dispatch result', schema: actionResponseBody },
        413: tooLarge,
        422: validationError,
      },
      handler: async (ctx) => {
        // The validated body is this request's own object: complete it in place.
        const request = ctx.state.body as ActionRequest;
        request.event_id ??= randomUUID();
        request.timestamp ??= isoWithOffset(clock());
        ctx.body = await dispatcher.dispatch(request);
      },
    }),
  ];
}
