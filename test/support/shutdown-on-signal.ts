/**
 * Child process of services/lib/http/server.test.ts: stops through onShutdownSignal with a 2 s grace. argv[2]
 * `stdin` makes the shutdown wait for a line on stdin (the test decides when it ends), `never` makes it never end.
 */
import { createLogger } from '../../services/lib/log/index.js';
import { onShutdownSignal } from '../../services/lib/http/index.js';

const logger = createLogger({ service: 'child', json: true });
onShutdownSignal(
  logger,
  async () => {
    logger.info('shutdown started');
    if (process.argv[2] === 'never') await new Promise(() => undefined);
    await new Promise((resolve) => process.stdin.once('data', resolve));
    logger.info('shutdown finished');
  },
  2000,
);
logger.info('ready');
// Keeps the event loop alive until a signal ends the process.
setInterval(() => undefined, 60_000);
