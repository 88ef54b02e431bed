import type Koa from 'koa';
import client from 'prom-client';

/** Prometheus registry of one service, with Node's default process metrics and an HTTP histogram. */
export interface HttpMetrics {
  registry: client.Registry;
  /** Records one answered request: its duration by method, matched route and status. */
  observe(ctx: Koa.Context, seconds: number): void;
}

/**
 * prom-client's defaults that are gauges named like counters, which `promtool check metrics` flags: the counts by
 * type stay (`nodejs_active_handles{type}`, `nodejs_active_requests{type}`, `nodejs_active_resources{type}`), and
 * `sum()` of one of those is its total.
 */
const GAUGES_NAMED_LIKE_COUNTERS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** The router's note of the route a request matched: the kit registers string paths only. */
type MatchedContext = Koa.Context & { _matchedRoute?: string };

/** Creates the registry and the histogram that times every request by method, route and status. */
export function createHttpMetrics(service: string): HttpMetrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ service });
  client.collectDefaultMetrics({ register: registry });
  for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  const duration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  // One pre-bound child per method/route/status: startTimer() allocates closures and merges label objects on
  // every request. The key space is bounded (known methods, registered routes, HTTP statuses).
  const children = new Map<string, { observe(value: number): void }>();
  const childFor = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let child = children.get(key);
    if (!child) {
      child = duration.labels(method, route, String(status));
      children.set(key, child);
    }
    return child;
  };
  const observe = (ctx: Koa.Context, seconds: number) =>
    childFor(ctx.method, (ctx as MatchedContext)._matchedRoute ?? 'unmatched', ctx.status).observe(seconds);
  return { registry, observe };
}
