import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { isoWithOffset, type Clock } from '../dispatch/clock.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import type { DispatchQueue } from '../dispatch/dispatch-queue.js';
import { fastActionRequest } from '../dispatch/fast-action-request.js';
import { normaliseFlexibleAlert } from '../dispatch/normalise-alert.js';
import { actionRequestSchema, flexibleAlertSchema } from '../dispatch/schemas.js';
import type { ActionRequest } from '../dispatch/types.js';
import { randomUUID } from 'node:crypto';
import { actionResponseBody, errorBody, flexibleAlertResponseBody } from './response-schemas.js';
import { counted } from '../../lib/wording/index.js';

const validationError = { description: 'A field is invalid (every invalid field is listed)', schema: errorBody };
const tooLarge = { description: 'Body larger than the configured limit', schema: errorBody };
const queueFull = {
  description: 'The dispatch queue is full; the `Retry-After` header says how many seconds to wait',
  schema: errorBody,
};

/** Seconds a refused sender is asked to wait: queued dispatches take tool time-outs, not minutes. */
const RETRY_AFTER_SECONDS = '1';

/**
 * POST /alerts (flexible, queued and answered 202 before the tools run; 429 when the queue is full) and
 * POST /actions/execute (answered 200 after; its sender waits, so it is paced by its own connections).
 */
export function dispatchRoutes(dispatcher: Dispatcher, intake: DispatchQueue, clock: Clock): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/alerts',
      summary: 'Flexible JSON alert ingestion',
      description:
        'Any JSON object; recognised fields are type-checked and mapped onto an action request (alert_type ' +
        'defaults to UNKNOWN, source_id to unknown, alert_name to alert_type, answer to YES). Unrecognised fields ' +
        'are kept in metadata. Answered 202 as soon as the alert is accepted; the dispatch runs in the background ' +
        'and its result is published as an `alert_action` event. Accepted alerts wait in a bounded queue: when it ' +
        'is full the alert is refused with 429 and `Retry-After`.',
      tags: ['dispatch'],
      request: { body: flexibleAlertSchema },
      responses: {
        202: { description: 'Accepted for dispatch', schema: flexibleAlertResponseBody },
        413: tooLarge,
        422: validationError,
        429: queueFull,
        503: { description: 'The service is shutting down', schema: errorBody },
      },
      handler: (ctx) => {
        const request = normaliseFlexibleAlert(ctx.state.body, () => isoWithOffset(clock()));
        if (!intake.offer(request)) {
          if (dispatcher.signal.aborted) throw new HttpError(503, 'Service is shutting down');
          throw new HttpError(429, `Dispatch queue is full (${counted(intake.depth, 'alert')} waiting); retry later`, {
            'Retry-After': RETRY_AFTER_SECONDS,
          });
        }
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
      path: '/actions/execute',
      summary: 'Dispatch an action request',
      description:
        'Runs the dispatch rules (answer NO and dedup hits run nothing; tools from the request, the subscription, ' +
        'else log_alert; escalation adds tools; capture_snapshot first) and answers 200 once every tool has finished. ' +
        'Unknown fields are refused with 422 naming each, at the top level and inside dedup, escalation and each ' +
        'payload; metadata and the argument object of each tool are free-form.',
      tags: ['dispatch'],
      request: { body: actionRequestSchema, fastBody: fastActionRequest },
      responses: {
        200: { description: 'Dispatch result', schema: actionResponseBody },
        413: tooLarge,
        422: validationError,
      },
      handler: async (ctx) => {
        // The validated body is this request's own object: complete it in place.
        const body = ctx.state.body;
        const request: ActionRequest = Object.assign(body, {
          event_id: body.event_id ?? randomUUID(),
          timestamp: body.timestamp ?? isoWithOffset(clock()),
        });
        ctx.body = await dispatcher.dispatch(request);
      },
    }),
  ];
}
