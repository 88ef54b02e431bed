export type { NewResource, ResourceStore, Watch, WatchEvent } from './resource-store.js';
export type {
  BatchWorkloadSpec,
  LongRunningWorkloadSpec,
  Worker,
  WorkerContext,
  WorkloadDriver,
  WorkloadMode,
  WorkloadOwner,
  WorkloadSpec,
  WorkloadStatus,
} from './workload-driver.js';
export { AlreadyExistsError, ConflictError, InvalidError, NotFoundError } from './errors.js';
export { updateStatusWithRetry, updateWithRetry } from './status-update.js';
export type { ServiceControlPlane } from './control-plane.js';
export type { EventSink, ResourceEvent } from './events.js';
