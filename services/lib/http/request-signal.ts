import type Koa from 'koa';
import { linkAbort } from '../abort/index.js';

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
 * (ClientGoneError) or when the server begins to stop (ServerStoppingError). Its link to the server's stop signal
 * is removed when the response closes, so long-lived servers collect none.
 */
export function requestSignal(ctx: Pick<Koa.Context, 'app' | 'req' | 'res'>): AbortSignal {
  const controller = new AbortController();
  const { res } = ctx;
  const stop = stopSignals.get(ctx.app);
  // Linked, not listened to: every request in flight shares the stop signal, which carries one listener for them all.
  const unlinkStop = stop && linkAbort(stop, controller, () => new ServerStoppingError());
  const onClose = () => {
    unlinkStop?.();
    if (!res.writableFinished) controller.abort(new ClientGoneError());
  };
  // A response closed before this call (the client left while the body was read) never emits 'close' again.
  if (res.closed) onClose();
  else res.once('close', onClose);
  return controller.signal;
}
