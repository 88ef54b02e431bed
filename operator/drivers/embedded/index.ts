export { EmbeddedResourceStore, StoreInUseError } from './resource-store.js';
export type { EmbeddedResourceStoreOptions } from './resource-store.js';
export { EmbeddedWorkloadDriver } from './workload-driver.js';
export type { EmbeddedWorkloadDriverOptions } from './workload-driver.js';
