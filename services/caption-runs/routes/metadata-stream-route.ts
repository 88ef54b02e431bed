import { once } from 'node:events';
import Joi from 'joi';
import { defineRoute, formatSseMessage, openSseResponse, requestSignal, type RouteSpec } from '../../lib/http/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { MetadataRelay, RelayItem } from '../relay/metadata-relay.js';
import { RUN_STATES, type RunState } from '../runs/run-view.js';

/** What the stream route needs: the relay, and each kept run's state for the status messages. */
export interface MetadataStreamDeps {
  relay: MetadataRelay;
  runStates(): Promise<Record<string, RunState>>;
  logger: Logger;
}

async function render(item: RelayItem, deps: MetadataStreamDeps): Promise<string> {
  if (item.kind === 'message') return item.json;
  if (item.kind === 'missed') return JSON.stringify({ type: 'missed', missed: item.count });
  const runs = await deps.runStates().catch((error: Error) => {
    deps.logger.warn('run states could not be read for the stream status', { error: error.message });
    return {};
  });
  return JSON.stringify({ type: 'status', runs });
}

/** The data of the stream's events (all sent without an event name): a caption, a status or a missed count. */
const streamMessage = Joi.alternatives()
  .try(
    Joi.object({
      runId: Joi.string().required(),
      data: Joi.object().unknown(true).required().description('The published message’s metadata'),
      received_at: Joi.number().required().description('Seconds since the epoch'),
    }).unknown(true),
    Joi.object({
      type: Joi.string().valid('status').required(),
      runs: Joi.object()
        .pattern(Joi.string(), Joi.string().valid(...RUN_STATES))
        .required()
        .description('Every kept run: runId → its state'),
    }),
    Joi.object({ type: Joi.string().valid('missed').required(), missed: Joi.number().integer().min(1).required() }),
  )
  .description('A caption, `{"type": "status"}` after 1 s without one, or `{"type": "missed"}` for a slow reader');

/**
 * GET /generate_captions_alerts/metadata-stream: one SSE stream for every run. Registered before
 * `/generate_captions_alerts/:run_id`, which would otherwise take the path for a runId.
 */
export function metadataStreamRoute(deps: MetadataStreamDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/generate_captions_alerts/metadata-stream',
    summary: 'Every run’s captions as one Server-Sent Events stream',
    description:
      'Each caption published on `live-video-captioning/{runId}` becomes one `data:` message ' +
      '`{"runId", "data", "received_at"}` (`data`: the message’s metadata; `received_at`: seconds since the epoch). ' +
      'After 1 s without a message: `{"type": "status", "runs": {runId: state}}` (every kept run), again each second ' +
      'while quiet. A reader too slow for its buffer loses the oldest messages and is told: `{"type": "missed", ' +
      '"missed": n}` before the next message.',
    tags: ['runs'],
    responses: {
      200: {
        description: 'text/event-stream; every event is a `data:` line of JSON',
        contentType: 'text/event-stream',
        events: { message: streamMessage },
      },
    },
    handler: async (ctx) => {
      if (ctx.method === 'HEAD') {
        // The headers of the stream, without opening one that would never end.
        ctx.status = 200;
        ctx.type = 'text/event-stream';
        return;
      }
      const signal = requestSignal(ctx);
      // Subscribed before the headers go out: a client that has them misses nothing published after.
      const subscriber = deps.relay.subscribe();
      const res = openSseResponse(ctx);
      const end = () => subscriber.close();
      signal.addEventListener('abort', end, { once: true });
      res.once('close', end);
      try {
        for (let item = await subscriber.next(); item; item = await subscriber.next()) {
          const data = await render(item, deps);
          if (res.destroyed || !res.writable) break;
          if (!res.write(formatSseMessage({ data }))) {
            // Waits for this reader only; the relay keeps buffering (bounded) for it meanwhile.
            const waiting = new AbortController();
            await Promise.race([
              once(res, 'drain', { signal: waiting.signal }),
              once(res, 'close', { signal: waiting.signal }),
            ]).finally(() => waiting.abort());
          }
        }
      } finally {
        signal.removeEventListener('abort', end);
        subscriber.close();
        if (!res.writableEnded) res.end();
      }
    },
  });
}
