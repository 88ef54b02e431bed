import { outboundRequest, UNRESTRICTED } from '../../lib/outbound/index.js';

/** Whether a dependency answers, in words for `/health`. */
export interface Reachability {
  reachable: boolean;
  detail: string;
}

/** Asks a dependency whether it answers. */
export type Probe = (signal?: AbortSignal) => Promise<Reachability>;

/**
 * A probe that GETs `url` (an address from the configuration, so no address policy applies) within `timeoutMs`:
 * reachable on any 2xx answer.
 */
export function httpProbe(url: string, timeoutMs: number): Probe {
  const shown = withoutCredentials(url);
  return async (signal) => {
    try {
      const response = await outboundRequest(url, { policy: UNRESTRICTED, timeoutMs, signal, maxBytes: 64 * 1024 });
      response.discard();
      const reachable = response.status >= 200 && response.status < 300;
      return { reachable, detail: reachable ? `${shown} answers` : `${shown} answered HTTP ${response.status}` };
    } catch (error) {
      return { reachable: false, detail: `${shown} does not answer: ${(error as Error).message}` };
    }
  };
}

/** `url` without user and password, for health details and logs. */
export function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.href.replace(/\/$/, '');
}
