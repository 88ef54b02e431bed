import type { ResourceStore } from './resource-store.js';
import type { Worker } from './workload-driver.js';

/**
 * What a service receives from the process it runs in: the resource store to create and read resources in, the
 * namespace to use, and a way to register the workers it implements. Embedded, registered workers run the workloads
 * in this process; in the cluster registration is a no-op (workers run in their own pods, `argus worker <name>`).
 */
export interface ServiceControlPlane {
  resources: ResourceStore;
  namespace: string;
  registerWorker(name: string, worker: Worker): void;
}
