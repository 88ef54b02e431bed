import { randomUUID } from 'node:crypto';
import type Koa from 'koa';

const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Takes a safe incoming `X-Request-Id` or makes one; echoes it on the response and keeps it in ctx.state. */
export function assignRequestId(ctx: Koa.Context): void {
  const incoming = ctx.get('x-request-id');
  const id = SAFE_ID.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
}
