import type Koa from 'koa';

/** Reason of a request signal aborted because its client went away before the answer was sent. */
export class ClientGoneError extends Error {
  constructor() {
    super('client disconnected');
    this.name = 'ClientGoneError';
  }
}

/** Reason of a request signal aborted because the server serving it began to stop. */
export class ServerStoppingError extends Error {
  constructor() {
    super('server is shutting down');
    this.name = 'ServerStoppingError';
  }
}

// Set by listen() for the apps it serves; an app that is not listened to by the kit has no stop signal.
const stopSignals = new WeakMap<Koa, AbortSignal>();

/** Ties `app`'s request signals to `signal`, which listen() aborts when the server begins to stop. */
export function setStopSignal(app: Koa, signal: AbortSignal): void {
  stopSignals.set(app, signal);
}

/**
 * An AbortSignal for the work of one request: it fires when the client disconnects before its answer was sent
 * (ClientGoneError) or when the server begins to stop (ServerStoppingError). Its listener on the server's stop signal
 * is removed when the response closes, so long-lived servers collect none.
 */
export function requestSignal(ctx: Pick<Koa.Context, 'app' | 'req' | 'res'>): AbortSignal {
  const controller = new AbortController();
  const { res } = ctx;
  const stop = stopSignals.get(ctx.app);
  const onStop = () => controller.abort(new ServerStoppingError());
  const onClose = () => {
    stop?.removeEventListener('abort', onStop);
    if (!res.writableFinished) controller.abort(new ClientGoneError());
  };
  if (stop?.aborted) onStop();
  else stop?.addEventListener('abort', onStop, { once: true });
  // A response closed before this call (the client left while the body was read) never emits 'close' again.
  if (res.closed) onClose();
  else res.once('close', onClose);
  return controller.signal;
}
