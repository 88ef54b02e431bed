import client, { type Registry } from 'prom-client';

/** The controller metrics of one registry, labelled by controller. */
export interface ControllerMetrics {
  reconciles: client.Counter<'controller' | 'result'>;
  duration: client.Histogram<'controller'>;
  errors: client.Counter<'controller'>;
  /** Reports `depth()` as the controller's queue depth at every scrape. */
  trackDepth(controller: string, depth: () => number): void;
}

const byRegistry = new WeakMap<Registry, ControllerMetrics>();

/** The controller metrics registered in `registry` (made once per registry, shared by its controllers). */
export function controllerMetrics(registry: Registry): ControllerMetrics {
  const known = byRegistry.get(registry);
  if (known) return known;
  const depths = new Map<string, () => number>();
  const metrics: ControllerMetrics = {
    reconciles: new client.Counter({
      name: 'argus_controller_reconcile_total',
      help: 'Reconciles by controller and result (success, requeue, error).',
      labelNames: ['controller', 'result'],
      registers: [registry],
    }),
    duration: new client.Histogram({
      name: 'argus_controller_reconcile_duration_seconds',
      help: 'Time one reconcile took.',
      labelNames: ['controller'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    errors: new client.Counter({
      name: 'argus_controller_errors_total',
      help: 'Failed reconciles and watch handler errors by controller.',
      labelNames: ['controller'],
      registers: [registry],
    }),
    trackDepth: (controller, depth) => depths.set(controller, depth),
  };
  new client.Gauge({
    name: 'argus_controller_queue_depth',
    help: 'Objects waiting for or in a reconcile, or waiting for a retry, by controller.',
    labelNames: ['controller'],
    registers: [registry],
    collect() {
      for (const [controller, depth] of depths) this.set({ controller }, depth());
    },
  });
  byRegistry.set(registry, metrics);
  return metrics;
}
