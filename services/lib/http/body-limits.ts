/** The deepest nesting of objects and arrays a JSON body may have (the body itself is level 1). */
export const DEFAULT_JSON_MAX_DEPTH = 32;

/**
 * How much of an unread request body is read and thrown away before an answer that does not need it (an early
 * rejection), so that the connection stays usable and the client is not reset while it is still sending. A longer
 * body is answered at once and the connection closed after the answer (see unread-body.ts).
 */
export const DEFAULT_DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;

/** How long a connection closed after an early answer keeps reading (and dropping) what the client still sends. */
export const LINGER_MS = 10_000;

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Bytes of a size given as a number or as text such as `'1mb'`, `'512kb'`, `'2048b'` (1 kb = 1024 b). */
export function byteSize(size: number | string): number {
  if (typeof size === 'number') return size;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(size);
  if (!match) throw new Error(`Invalid byte size "${size}"`);
  return Math.floor(Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]);
}

/** The body limits of a service, as its OpenAPI description states them. */
export function describeBodyLimits(jsonMaxBytes: number, jsonMaxDepth: number, discardLimit: number): string {
  const mib = (bytes: number) => `${Math.round((bytes / 1024 ** 2) * 10) / 10} MiB`;
  return (
    `Limits: a JSON body holds at most ${jsonMaxBytes} bytes (${mib(jsonMaxBytes)}) as sent and once decoded (413), ` +
    `nests objects and arrays at most ${jsonMaxDepth} levels deep, is UTF-8 (application/json, else 415) and may ` +
    'be compressed with Content-Encoding gzip, deflate or br (an undecodable body is 400, other codings 415; ' +
    `multipart bodies must not be compressed). When an answer comes before the body was read, up to ${mib(discardLimit)} ` +
    'of it is read and dropped first; a longer body is answered at once with Connection: close, and the connection ' +
    `is closed only after the answer was sent (the server reads on for at most ${LINGER_MS / 1000} s).`
  );
}
