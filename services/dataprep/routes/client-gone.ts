import { requestSignal, type RouteContext } from '../../lib/http/index.js';

/**
 * An AbortSignal that fires when the client disconnects before its answer was sent, or when the service begins to
 * shut down: the request's work (reading the upload, processing) then stops and rolls back.
 */
export function clientGone(ctx: RouteContext<unknown, unknown, unknown>): AbortSignal {
  return requestSignal(ctx);
}
