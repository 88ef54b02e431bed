import type { RouteContext } from '../../lib/http/index.js';

/** An AbortSignal that fires when the client disconnects before its answer was sent (processing then stops). */
export function clientGone(ctx: RouteContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}
