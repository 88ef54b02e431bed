/**
 * Child process of logger.test.ts: logs lines (JSON) and ends the process in the same turn, the way argv[2] says:
 * `exit` calls process.exit(3), `throw` throws an uncaught error.
 */
import { createLogger } from '../../services/lib/log/index.js';

const logger = createLogger({ service: 'child', json: true });
logger.info('first');
logger.info('second');
logger.warn('careful');
if (process.argv[2] === 'throw') throw new Error('boom');
process.exit(3);
