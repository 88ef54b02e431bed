import { InvalidHttpUrlError, parseHttpUrl } from '../../lib/http/index.js';
import {
  AllowList,
  OutboundError,
  outboundRequest,
  UNRESTRICTED,
  type OutboundPolicy,
  type Resolver,
} from '../../lib/outbound/index.js';
import { alertSummary, NO_PARAMETERS, ToolError, ToolRefusal, type DispatchTool } from './tool.js';

/** Options of the webhook tool. */
export interface WebhookToolOptions {
  /** WEBHOOK_URL: enables the tool for every alert; operator configuration, so reached wherever it points. */
  defaultUrl?: string;
  /** WEBHOOK_URL_ALLOW: the only addresses and host names a URL from `tool_arguments` may reach (default none). */
  allow?: AllowList;
  /** Host name resolution (tests inject their own). */
  resolve?: Resolver;
}

/** Backstop of one POST; the attempt's own time-out (ALERT_TOOL_TIMEOUT_MS, at most 300 s) normally ends it first. */
const WEBHOOK_TIMEOUT_MS = 300_000;

/** Parses a Retry-After header (seconds or HTTP date) into milliseconds. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The URL to POST to, or a non-retryable ToolError when it is not an absolute http(s) URL. */
function checkedUrl(raw: unknown): URL {
  try {
    return parseHttpUrl(String(raw), 'webhook url');
  } catch (err) {
    if (err instanceof InvalidHttpUrlError) throw new ToolError(err.message, false);
    throw err;
  }
}

/**
 * `trigger_webhook`: POSTs the alert summary as JSON to `tool_arguments.trigger_webhook.url`, else WEBHOOK_URL.
 * WEBHOOK_URL goes wherever the operator pointed it; any other URL only to what WEBHOOK_URL_ALLOW lists, checked
 * by the outbound guard before a socket opens (a refusal is a ToolRefusal). Redirects are not followed.
 * 429 and 5xx answers, network errors and time-outs are retryable; other answers fail the tool.
 */
export function triggerWebhookTool(options: WebhookToolOptions): DispatchTool {
  const configured = options.defaultUrl ? checkedUrl(options.defaultUrl).href : undefined;
  const perRequest: OutboundPolicy = {
    allow: options.allow ?? AllowList.EMPTY,
    publicAddresses: false,
    setting: 'WEBHOOK_URL_ALLOW',
  };
  return {
    name: 'trigger_webhook',
    description: 'POST the alert as JSON to a webhook (tool_arguments.trigger_webhook.url or WEBHOOK_URL).',
    requiresEnv: ['WEBHOOK_URL'],
    source: 'builtin',
    parameters: NO_PARAMETERS,
    enabled: () => Boolean(configured),
    runnable: (args) => Boolean(args.url ?? configured),
    async run({ request, args, snapshotPath, signal }) {
      const url = checkedUrl(args.url ?? configured);
      let status: number;
      let retryAfter: string | undefined;
      try {
        const res = await outboundRequest(url, {
          policy: url.href === configured ? UNRESTRICTED : perRequest,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'argus-alert-dispatch/1' },
          body: JSON.stringify({ event: 'alert', ...alertSummary(request, snapshotPath) }),
          timeoutMs: WEBHOOK_TIMEOUT_MS,
          signal,
          resolve: options.resolve,
        });
        res.discard();
        status = res.status;
        retryAfter = res.headers['retry-after'];
      } catch (err) {
        if (signal.aborted) throw err;
        if (err instanceof OutboundError && err.failure === 'refused') throw new ToolRefusal(err.message);
        throw new ToolError(`webhook unreachable: ${(err as Error).message}`, true);
      }
      if (status >= 200 && status < 300) return { status };
      const retryable = status === 429 || status >= 500;
      const retryAfterMs = retryable ? parseRetryAfter(retryAfter ?? null) : undefined;
      throw new ToolError(`webhook answered ${status}`, retryable, retryAfterMs);
    },
  };
}
