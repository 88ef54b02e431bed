import winston from 'winston';

/** Logger used across services: winston with the service name on every line. */
export type Logger = winston.Logger;

/** Options of createLogger; `json` defaults to "stdout is not a terminal". */
export interface LoggerOptions {
  service: string;
  level?: string;
  json?: boolean;
}

const SECRET_KEYS = /(secret|password|token|api[-_]?key|authorization|credential)/i;

/** Replaces values of secret-looking fields so that no secret reaches a log line. */
const redactSecrets = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (SECRET_KEYS.test(key) && info[key] !== undefined) info[key] = '[redacted]';
  }
  return info;
});

const readable = winston.format.printf(({ level, message, timestamp, service, requestId, ...rest }) => {
  const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
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
      json ? winston.format.json() : winston.format.combine(winston.format.colorize(), readable),
    ),
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn'] })],
  });
}
