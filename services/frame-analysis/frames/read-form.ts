import type { IncomingMessage } from 'node:http';
import { malformedMultipartMessage, openMultipart, printablePartName } from '../../lib/http/index.js';
import { AnalysisError } from '../errors.js';

/** The form field that carries frames. */
export const FRAMES_FIELD = 'frames';

/** One submitted frame: its bytes, or that it went over the per-frame limit (reading stopped there). */
export interface SubmittedFrame {
  bytes?: Buffer;
  tooLarge: boolean;
}

/** What a multipart analysis request carried: its text fields (first value wins) and its frames, in order. */
export interface AnalyzeForm {
  fields: Record<string, string>;
  frames: SubmittedFrame[];
}

/** Limits of one request's body. */
export interface FormLimits {
  maxFrames: number;
  maxFrameBytes: number;
  maxBodyBytes: number;
}

const tooMany = (max: number) => new AnalysisError(413, 'TOO_MANY_FRAMES', `At most ${max} frames per request`);
const tooLarge = (max: number) => new AnalysisError(413, 'REQUEST_TOO_LARGE', `The request body exceeds ${max} bytes`);

/** Whether the request declares a multipart/form-data body. */
export function isMultipartForm(req: IncomingMessage): boolean {
  return /^multipart\/form-data\s*(;|$)/i.test(req.headers['content-type'] ?? '');
}

/**
 * Reads a multipart/form-data body into memory, within limits: each `frames` file is kept up to `maxFrameBytes`
 * (reading it stops there and the frame is marked too large), more than `maxFrames` frames or a body over
 * `maxBodyBytes` fails with 413 (the request is then unpiped; the HTTP kit settles the unread rest).
 * A malformed body (cut short included) or a file part under another name than `frames` is a 400. `signal` (client gone, server stopping) ends reading with its reason.
 */
export function readAnalyzeForm(req: IncomingMessage, limits: FormLimits, signal?: AbortSignal): Promise<AnalyzeForm> {
  return new Promise<AnalyzeForm>((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limits.maxBodyBytes) {
      reject(tooLarge(limits.maxBodyBytes));
      return;
    }
    const parser = openMultipart(req.headers, {
      files: limits.maxFrames,
      fileSize: limits.maxFrameBytes,
      fields: 32,
      fieldSize: 64 * 1024,
      parts: limits.maxFrames + 32,
    });
    if (!parser) {
      reject(new AnalysisError(400, 'BAD_REQUEST', 'Malformed multipart/form-data body'));
      return;
    }
    const form: AnalyzeForm = { fields: {}, frames: [] };
    let received = 0;
    let settled = false;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      req.off('data', count);
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) {
        resolve(form);
        return;
      }
      req.unpipe(parser);
      req.pause();
      parser.destroy();
      reject(error);
    };
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limits.maxBodyBytes) finish(tooLarge(limits.maxBodyBytes));
    };
    const onAbort = () => finish(signal!.reason);
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });

    parser.on('field', (name, value) => {
      if (!(name in form.fields)) form.fields[name] = value;
    });
    parser.on('file', (name, stream) => {
      if (name !== FRAMES_FIELD) {
        stream.resume();
        const message = `Unexpected file part "${printablePartName(name)}": frames go in "${FRAMES_FIELD}"`;
        finish(new AnalysisError(400, 'BAD_REQUEST', message));
        return;
      }
      const frame: SubmittedFrame = { tooLarge: false };
      form.frames.push(frame);
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // busboy stops at fileSize and discards the rest of the part: nothing past the limit is kept.
      stream.on('limit', () => {
        frame.tooLarge = true;
        chunks.length = 0;
      });
      stream.on('end', () => {
        if (!frame.tooLarge) frame.bytes = Buffer.concat(chunks);
      });
    });
    parser.on('filesLimit', () => finish(tooMany(limits.maxFrames)));
    parser.on('error', (error) => finish(new AnalysisError(400, 'BAD_REQUEST', malformedMultipartMessage(error))));
    parser.on('close', () => finish());
    req.on('data', count);
    req.pipe(parser);
  });
}
