import winston from 'winston';
import { BatchedConsoleTransport, MESSAGE, type ConsoleStreams } from './batched-console.js';

/** Logger used across services: winston with the service name on every line. */
export type Logger = winston.Logger;

/** Options of createLogger; `json` defaults to "stdout is not a terminal". */
export interface LoggerOptions {
  service: string;
  level?: string;
  json?: boolean;
  /** Where lines go (default process.stdout and process.stderr; warn and error go to stderr). */
  streams?: ConsoleStreams;
}

const SECRET_KEYS = /(secret|password|token|api[-_]?key|authorization|credential)/i;

/** Replaces values of secret-looking fields so that no secret reaches a log line. */
const redactSecrets = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (SECRET_KEYS.test(key) && info[key] !== undefined) info[key] = '[redacted]';
  }
  return info;
});

const safeJson = winston.format.json();

/**
 * JSON of a log record. JSON.stringify is several times cheaper than winston's json format (a stable, sorted,
 * cycle-safe serializer), which remains the fallback for what JSON.stringify refuses (cycles, BigInt).
 */
function toJson(record: Record<string, unknown>): string {
  try {
    return JSON.stringify(record);
  } catch {
    // The json format always returns the record it was given, its line under MESSAGE.
    const formatted = safeJson.transform({ ...record } as winston.Logform.TransformableInfo, safeJson.options);
    return (formatted as winston.Logform.TransformableInfo)[MESSAGE] as string;
  }
}

/** One JSON object per line. */
const jsonLine = winston.format((info) => {
  info[MESSAGE] = toJson(info);
  return info;
});

const readable = winston.format.printf(({ level, message, timestamp, service, requestId, ...rest }) => {
  const extra = Object.keys(rest).length ? ` ${toJson(rest)}` : '';
  const rid = requestId ? ` [${String(requestId)}]` : '';
  return `${String(timestamp)} ${level} ${String(service)}${rid}: ${String(message)}${extra}`;
});

/** JSON lines when not on a TTY (cluster), colourised readable lines on a terminal. */
export function createLogger(options: LoggerOptions): Logger {
  const json = options.json ?? !process.stdout.isTTY;
  return winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta: { service: options.service },
    format: winston.format.combine(
      redactSecrets(),
      winston.format.timestamp(),
      json ? jsonLine() : winston.format.combine(winston.format.colorize(), readable),
    ),
    transports: [new BatchedConsoleTransport(options.streams)],
  });
}
