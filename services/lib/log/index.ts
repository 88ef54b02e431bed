export { createLogger } from './logger.js';
export type { Logger, LoggerOptions } from './logger.js';
