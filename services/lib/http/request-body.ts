import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import { parse as parseJson } from '@hapi/bourne';
import type Koa from 'koa';
import { HttpError } from './errors.js';
import { exceedsJsonDepth } from './json-depth.js';
import { RequestValidationError } from './validation.js';

/** The content codings a JSON body may arrive in (`Content-Encoding`), each with its decoder. */
const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/** Limits of a JSON request body. */
export interface JsonBodyLimits {
  /** Largest body in bytes, as sent and once decoded. */
  maxBytes: number;
  /** Deepest nesting of objects and arrays. */
  maxDepth: number;
}

/** The content coding of `req`'s body (lower case), undefined for none; 415 for anything but one known coding. */
export function contentCoding(req: IncomingMessage, accepted: readonly string[] = Object.keys(DECODERS)) {
  const header = req.headers['content-encoding']?.trim().toLowerCase();
  if (!header || header === 'identity') return undefined;
  if (!accepted.includes(header)) {
    const list = accepted.length ? [...accepted, 'identity'].join(', ') : 'identity only';
    throw new HttpError(415, `Unsupported Content-Encoding "${header.slice(0, 64)}": accepted are ${list}`);
  }
  return header;
}

/** Whether `req` declares a body (a non-zero Content-Length or a Transfer-Encoding). */
export function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function tooLarge(maxBytes: number, decoded: boolean): HttpError {
  return new HttpError(413, `The request body is larger than ${maxBytes} bytes${decoded ? ' once decoded' : ''}`);
}

/**
 * Reads `req`'s body into one Buffer, decoding its content coding on the way. Both the bytes sent and the decoded
 * bytes are held to `maxBytes`: past it, reading and decoding stop at once (a decompression bomb inflates no further
 * than the limit) and the promise fails with 413; a body that does not decode fails with 400. What stays unread is
 * left to the kit's unread-body handling.
 */
export function readRequestBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const coding = contentCoding(req);
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) return Promise.reject(tooLarge(maxBytes, false));
  const decoder = coding ? DECODERS[coding]() : undefined;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let sent = 0;
    let decoded = 0;
    let settled = false;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      req.off('data', onSent);
      req.off('close', onClose);
      if (decoder) {
        req.unpipe(decoder);
        decoder.off('data', onDecoded);
        decoder.destroy();
      }
      if (error === undefined) resolve(Buffer.concat(chunks, decoded));
      else {
        req.pause();
        reject(error);
      }
    };
    const onSent = (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > maxBytes) finish(tooLarge(maxBytes, false));
      else if (!decoder) onDecoded(chunk);
    };
    const onDecoded = (chunk: Buffer) => {
      decoded += chunk.length;
      if (decoded > maxBytes) finish(tooLarge(maxBytes, decoder !== undefined));
      else chunks.push(chunk);
    };
    // 'close' also follows a complete body; only one cut short (the client left) is a failure.
    const onClose = () => {
      if (!req.complete) finish(new HttpError(400, 'The request body was cut short'));
    };
    req.on('data', onSent);
    req.on('close', onClose);
    if (decoder) {
      decoder.on('data', onDecoded);
      decoder.on('error', () =>
        finish(new HttpError(400, `The body could not be decoded (Content-Encoding: ${coding})`)),
      );
      decoder.on('end', () => finish());
      req.pipe(decoder);
    } else {
      req.on('end', () => finish());
    }
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** JSON text starts with an object or an array (RFC 8259 whitespace before it). */
const OBJECT_OR_ARRAY = /^[ \t\n\r]*[[{]/;

/**
 * The JSON body of a request, undefined when there is none. Refused: a declared body whose media type is not JSON
 * (415), a charset other than UTF-8 (415), an unknown content coding (415), a body over the limit as sent or decoded
 * (413), one that does not decode, is not UTF-8, is not a JSON object or array, or carries a prototype key (400), and
 * one nested deeper than `maxDepth` (the service's validation status), before it is parsed.
 */
export async function readJsonBody(ctx: Koa.Context, limits: JsonBodyLimits): Promise<unknown> {
  const { req } = ctx;
  if (!declaresBody(req)) return undefined;
  if (!ctx.request.is('application/json', 'application/*+json')) {
    throw new HttpError(415, 'The request body must be JSON (Content-Type: application/json)');
  }
  const charset = ctx.request.charset.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpError(415, 'The request body must be JSON in UTF-8 (charset=utf-8)');
  }
  const bytes = await readRequestBody(req, limits.maxBytes);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HttpError(400, 'The request body is not valid UTF-8');
  }
  if (text.length === 0) return undefined;
  if (!OBJECT_OR_ARRAY.test(text)) throw new HttpError(400, 'Invalid JSON body: expected an object or an array');
  if (exceedsJsonDepth(text, limits.maxDepth)) {
    throw new RequestValidationError([
      { loc: ['body'], msg: `JSON nested deeper than ${limits.maxDepth} levels`, type: 'json.depth' },
    ]);
  }
  try {
    return parseJson(text, { protoAction: 'error' });
  } catch {
    throw new HttpError(400, 'Invalid JSON body');
  }
}
