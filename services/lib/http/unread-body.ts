import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import { LINGER_MS } from './body-limits.js';
import { declaresBody } from './request-body.js';

/** Reads and drops what is left of `req`'s body; true when it ended within `limit` bytes, false past it or cut off. */
function discard(req: IncomingMessage, limit: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let seen = 0;
    const done = (ended: boolean) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limit) {
        req.pause();
        done(false);
      }
    };
    const onEnd = () => done(true);
    const onClose = () => done(req.complete);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    // A reader that gave up (a multipart parser, a decoder) may still be attached: the rest is nobody's now.
    req.unpipe();
    req.resume();
  });
}

/**
 * Makes the connection close gracefully once the answer is out. Node closes a `Connection: close` socket as soon as
 * the answer is flushed; while the client is still sending, its next bytes then meet a reset, which can discard the
 * answer before the client read it (EPIPE, "other side closed" in fetch). Instead the socket half-closes after the
 * answer and keeps reading and dropping the body until the client closes (fetch does once it has the answer), for at
 * most LINGER_MS.
 */
function closeAfterAnswer(ctx: Koa.Context): void {
  const { req } = ctx;
  const socket = req.socket;
  ctx.set('Connection', 'close');
  socket.destroySoon = function lingeringClose() {
    socket.end();
    req.resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}

/**
 * Settles what the route left unread of the request body before the answer goes out (an early rejection, a limit, a
 * route that needed only the first part): up to `discardLimit` bytes are read and dropped, so the client gets the
 * answer after sending and the connection stays open; a longer body (declared, or found while dropping) is answered
 * at once and the connection closed gracefully after the answer.
 */
export async function settleUnreadBody(ctx: Koa.Context, discardLimit: number): Promise<void> {
  const { req } = ctx;
  if (ctx.respond === false || req.complete || req.destroyed || !declaresBody(req)) return;
  const declared = Number(req.headers['content-length']);
  if (!(declared > discardLimit) && (await discard(req, discardLimit))) return;
  if (!req.socket.destroyed) closeAfterAnswer(ctx);
}
