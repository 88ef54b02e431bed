import type Koa from 'koa';
import client from 'prom-client';
import type { Logger } from '../log/index.js';

/**
 * True for the errors Koa reports when the client went away (its choice, not our failure): the response closed before
 * it finished, the client closed its connection before its request body was complete (the HTTP parser's
 * HPE_INVALID_EOF_STATE), or the client's socket was reset (a socket error, with its syscall). A source breaking (an
 * S3 stream whose connection dropped) fails with the source's own error instead ("aborted", no syscall).
 */
function clientWentAway(err: NodeJS.ErrnoException): boolean {
  if (err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'HPE_INVALID_EOF_STATE') return true;
  return err.syscall !== undefined && (err.code === 'EPIPE' || err.code === 'ECONNRESET');
}

/**
 * Reports what Koa emits as `error` on `app`: failures after the answer began (a body stream breaking mid-body,
 * whose response Koa then destroys), which no error answer can reach the client any more. Each is logged with the
 * request id and counted once in `http_response_stream_errors_total{route}`; a client that leaves mid-body is
 * logged at debug only. Koa adds its own listener (stderr, or nothing for a silent app) only when none is set, so this
 * replaces it.
 */
export function reportResponseErrors(app: Koa, logger: Logger, registry: client.Registry): void {
  const failures = new client.Counter({
    name: 'http_response_stream_errors_total',
    help: 'Responses that failed after their headers were sent (a body stream broke mid-body)',
    labelNames: ['route'],
    registers: [registry],
  });
  // Koa reports a broken body twice (from on-finished and from its body pipeline): one report per response.
  const reported = new WeakSet<object>();
  app.on('error', (err: NodeJS.ErrnoException, ctx?: Koa.Context) => {
    if (ctx) {
      if (reported.has(ctx)) return;
      reported.add(ctx);
    }
    const fields = {
      requestId: ctx?.state.requestId,
      method: ctx?.method,
      path: ctx?.path,
      error: err.message,
      code: err.code,
    };
    if (clientWentAway(err)) {
      logger.debug('client left before the response was complete', fields);
      return;
    }
    failures.inc({ route: (ctx as { _matchedRoute?: string } | undefined)?._matchedRoute ?? 'unmatched' });
    logger.error('response failed after it began', fields);
  });
}
