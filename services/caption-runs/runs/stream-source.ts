import { lookup } from 'node:dns/promises';
import { realpath, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import type { AllowList } from '../../lib/outbound/index.js';

/** A host name as RFC 1123 allows it (IP literals are checked apart). */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
/** A URL scheme at the start of a value. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** Where a run reads its video: a live RTSP stream, or a file below the media root (demos). */
export type StreamSource = { kind: 'rtsp'; url: URL } | { kind: 'file'; path: string };

/**
 * Why `value` is not a stream Argus reads, checked without I/O; undefined when its form is right. An `rtsp://` or
 * `rtsps://` URL needs a valid host and no fragment; any other scheme is refused; a value without a scheme is a file
 * path below `mediaRoot` (refused when none is configured, or when it leaves the root).
 */
export function streamSourceProblem(value: string, mediaRoot: string | undefined): string | undefined {
  if (SCHEME.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return 'must be an rtsp:// or rtsps:// URL';
    }
    if (url.protocol !== 'rtsp:' && url.protocol !== 'rtsps:') {
      return `scheme ${url.protocol.slice(0, 16)} is not accepted: use rtsp:// or rtsps://`;
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!host || (isIP(host) === 0 && !HOST_NAME.test(host))) return 'must name a valid host';
    if (url.hash) return 'must not have a #fragment';
    if (!wellEscaped(url.username) || !wellEscaped(url.password)) {
      return 'must not have a malformed %-escape in its user name or password (write % as %25)';
    }
    return undefined;
  }
  if (!mediaRoot)
    return 'must be an rtsp:// or rtsps:// URL (files are accepted only when CAPTION_RUNS_MEDIA_ROOT is set)';
  if (value.includes('\0')) return 'must not contain a NUL character';
  if (!isInside(mediaRoot, path.resolve(mediaRoot, value))) return 'must be a file below the media root';
  return undefined;
}

/** Whether every `%` of a URL's user info starts a valid escape (the password is decoded before it is sealed). */
function wellEscaped(part: string): boolean {
  try {
    decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** Resolves a host name to its addresses (injectable for tests). */
export type HostResolver = (host: string) => Promise<string[]>;

const systemResolver: HostResolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * Checks what needs I/O, for a value whose form `streamSourceProblem` accepted: a file must exist below the media root
 * once links are followed; an RTSP host must be allowed by `allow` when one is configured (by name, or every address
 * it resolves to in its CIDRs). Resolves with the source, or rejects with a message for the client.
 */
export async function resolveStreamSource(
  value: string,
  options: { mediaRoot?: string; allow?: AllowList; resolve?: HostResolver },
): Promise<StreamSource> {
  if (!SCHEME.test(value)) {
    const root = await realpath(options.mediaRoot!).catch(() => undefined);
    const file = root && (await realpath(path.resolve(root, value)).catch(() => undefined));
    if (!root || !file || !isInside(root, file) || !(await stat(file)).isFile()) {
      throw new StreamSourceError('is not a file below the media root');
    }
    return { kind: 'file', path: file };
  }
  const url = new URL(value);
  const allow = options.allow;
  if (allow) {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!allow.hasHost(host)) {
      const addresses = isIP(host) ? [host] : await (options.resolve ?? systemResolver)(host).catch(() => []);
      if (addresses.length === 0) throw new StreamSourceError(`host ${host} does not resolve`);
      if (!addresses.every((address) => allow.hasAddress(address))) {
        throw new StreamSourceError(`host ${host} is not in CAPTION_RUNS_RTSP_ALLOW`);
      }
    }
  }
  return { kind: 'rtsp', url };
}

/** A stream source refused after its form was accepted; the message is for the client. */
export class StreamSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StreamSourceError';
  }
}

/** The source as it may be shown and logged: an RTSP URL's password replaced by `***`. */
export function redactedSource(value: string): string {
  if (!/^rtsps?:/i.test(value)) return value;
  try {
    const url = new URL(value);
    if (!url.password) return value;
    url.password = '***';
    return url.toString();
  } catch {
    return value;
  }
}

/**
 * What makes two sources the same stream for the 409 check: an RTSP URL as URL parsing normalises it (scheme and host
 * in lower case, default port dropped, credentials left out: the same camera with another login is the same stream);
 * a file path as given.
 */
export function streamKey(value: string): string {
  if (!/^rtsps?:/i.test(value)) return value;
  try {
    // rtsp is not a special scheme to the URL parser: host case and the default port are normalised here.
    const url = new URL(value);
    const defaultPort = url.protocol === 'rtsps:' ? '322' : '554';
    const port = url.port && url.port !== defaultPort ? `:${url.port}` : '';
    return `${url.protocol}//${url.hostname.toLowerCase()}${port}${url.pathname}${url.search}`;
  } catch {
    return value;
  }
}
