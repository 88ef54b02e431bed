import { alertSummary, NO_PARAMETERS, ToolError, type DispatchTool } from './tool.js';

/** Options of the webhook tool. */
export interface WebhookToolOptions {
  /** WEBHOOK_URL: enables the tool for every alert. */
  defaultUrl?: string;
}

/** Parses a Retry-After header (seconds or HTTP date) into milliseconds. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Returns the URL when it is an absolute http(s) URL, otherwise throws a non-retryable ToolError. */
function checkedUrl(raw: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    throw new ToolError('webhook url is not a valid URL', false);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolError('webhook url must be http or https', false);
  return url;
}

/**
 * `trigger_webhook`: POSTs the alert summary as JSON to `tool_arguments.trigger_webhook.url`, else WEBHOOK_URL.
 * 429 and 5xx answers and network errors are retryable; other answers fail the tool.
 */
export function triggerWebhookTool(options: WebhookToolOptions): DispatchTool {
  return {
    name: 'trigger_webhook',
    description: 'POST the alert as JSON to a webhook (tool_arguments.trigger_webhook.url or WEBHOOK_URL).',
    requiresEnv: ['WEBHOOK_URL'],
    source: 'builtin',
    parameters: NO_PARAMETERS,
    enabled: () => Boolean(options.defaultUrl),
    runnable: (args) => Boolean(args.url ?? options.defaultUrl),
    async run({ request, args, snapshotPath, signal }) {
      const url = checkedUrl(args.url ?? options.defaultUrl);
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'argus-alert-dispatch/1' },
          body: JSON.stringify({ event: 'alert', ...alertSummary(request, snapshotPath) }),
          signal,
          redirect: 'manual',
        });
      } catch (err) {
        if (signal.aborted) throw err;
        throw new ToolError(`webhook unreachable: ${(err as Error).cause ?? (err as Error).message}`, true);
      }
      await res.body?.cancel();
      if (res.ok) return { status: res.status };
      const retryable = res.status === 429 || res.status >= 500;
      const retryAfterMs = retryable ? parseRetryAfter(res.headers.get('retry-after')) : undefined;
      throw new ToolError(`webhook answered ${res.status}`, retryable, retryAfterMs);
    },
  };
}
