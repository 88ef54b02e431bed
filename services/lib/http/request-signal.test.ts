import { describe, expect, it } from '@jest/globals';
import { watchAbortListeners } from '../../../test/support/abort-listeners.js';
import { createLogger } from '../log/index.js';
import { createHttpApp, HttpError, listen, requestSignal, statusMessageStyle } from './index.js';
import { setStopSignal } from './request-signal.js';

const logger = createLogger({ service: 'request-signal-test', level: 'error', json: true });
logger.silent = true;

const CONCURRENT = 200;

/**
 * Every request's signal derives from the server's stop signal (an upload, an analysis, a streamed answer in
 * flight), which lives as long as the server: however many requests are in flight, it carries one listener for them
 * all, and none once they have ended, answered or failed.
 */
describe('request signals of many concurrent requests', () => {
  it(`${CONCURRENT} requests in flight at once add no listener each to the server's stop signal`, async () => {
    let arrived = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { app } = createHttpApp({
      info: { title: 'request signals', version: '1.0.0' },
      service: 'request-signal-test',
      logger,
      errors: statusMessageStyle('failed'),
      routes: [
        {
          method: 'post',
          path: '/work/:n',
          summary: 'Holds until every request arrived, then succeeds (even n) or fails (odd n)',
          responses: { 200: { description: 'done', contentType: 'application/json' }, 409: { description: 'odd' } },
          handler: async (ctx) => {
            const signal = requestSignal(ctx);
            if (++arrived === CONCURRENT) open();
            await gate;
            if (signal.aborted) throw signal.reason;
            if (Number(ctx.params.n) % 2 === 1) throw new HttpError(409, 'odd');
            ctx.body = { ok: true };
          },
        },
      ],
    });
    const server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'request-signal-test' });
    const stop = new AbortController();
    setStopSignal(app, stop.signal);
    const watch = watchAbortListeners(stop.signal);
    try {
      const statuses = await Promise.all(
        Array.from({ length: CONCURRENT }, async (_, n) => {
          const res = await fetch(`${server.url}/work/${n}`, { method: 'POST' });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      expect(statuses.filter((status) => status === 200)).toHaveLength(CONCURRENT / 2);
      expect(statuses.filter((status) => status === 409)).toHaveLength(CONCURRENT / 2);
    } finally {
      watch.stop();
      await server.close();
    }
    expect({ peak: watch.peak, warned: watch.warned(), now: watch.current() }).toEqual({
      peak: 1,
      warned: false,
      now: 0,
    });
  });
});
