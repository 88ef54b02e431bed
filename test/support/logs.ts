import { PassThrough } from 'node:stream';
import { createLogger, type LoggerOptions } from '../../services/lib/log/index.js';

/**
 * A service logger writing into memory (JSON lines unless `json: false`): `text` is what each stream received so
 * far, `lines()` parses it. Lines are written at the end of the event-loop turn: await `logsWritten()` first.
 */
export function captureLogs(options: Partial<LoggerOptions> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = { out: '', err: '' };
  stdout.on('data', (chunk) => (text.out += chunk));
  stderr.on('data', (chunk) => (text.err += chunk));
  const logger = createLogger({ service: 'test', level: 'info', json: true, ...options, streams: { stdout, stderr } });
  const lines = (which: 'out' | 'err' = 'out'): any[] =>
    text[which]
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  return { logger, text, lines };
}

/** Lets the current event-loop turn end, so that the lines logged in it are written. */
export const logsWritten = () => new Promise((resolve) => setImmediate(resolve));
