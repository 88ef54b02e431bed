import type { IncomingHttpHeaders } from 'node:http';
import busboy from 'busboy';

/** Limits of one multipart body (busboy's names). */
export type MultipartLimits = busboy.Limits;

/** A multipart/form-data parser for one request, as busboy makes it. */
export type MultipartParser = busboy.Busboy;

const ignore = () => undefined;

/**
 * The one way a service opens a multipart/form-data body (routes never import busboy themselves): a busboy parser
 * for `headers` within `limits`, or undefined when the headers declare no multipart body with a boundary.
 *
 * Every file stream the parser creates gets an error listener before any route listener sees it. busboy destroys the
 * part being read with "Unexpected end of form" when a body is cut short, and it does so whether or not anybody
 * reads that part: a part a route drains (another field name, past a limit) or one still waiting its turn would
 * otherwise emit 'error' with no listener, which ends the whole process. The parser itself reports the same failure
 * once, on its own 'error' event, which routes listen to.
 */
export function openMultipart(headers: IncomingHttpHeaders, limits: MultipartLimits): MultipartParser | undefined {
  let parser: MultipartParser;
  try {
    parser = busboy({ headers, limits });
  } catch {
    return undefined;
  }
  parser.prependListener('file', (_name, stream) => stream.on('error', ignore));
  return parser;
}

/** What busboy says of a malformed body, which is safe to repeat to the client (no path, no internals). */
const PARSER_MESSAGES = new Map([
  ['Unexpected end of form', 'the body ends before the closing boundary'],
  ['Unexpected end of file', 'the body ends before the closing boundary'],
  ['Malformed part header', 'a part header is malformed'],
]);

/** The answer's message for a parser 'error': what was wrong, when busboy said so in words it is safe to repeat. */
export function malformedMultipartMessage(error: unknown): string {
  const why = PARSER_MESSAGES.get((error as Error | undefined)?.message ?? '');
  return why ? `Malformed multipart/form-data body: ${why}` : 'Malformed multipart/form-data body';
}

/** A part's field name as an answer may quote it: printable ASCII, at most 64 characters. */
export function printablePartName(name: string): string {
  const printable = name.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 64 ? `${printable.slice(0, 64)}…` : printable;
}
