import type { ServiceControlPlane } from '../operator/ports/index.js';
import type { StopOptions } from '../services/lib/http/index.js';
import type { Logger } from '../services/lib/log/index.js';

/** A started service: where it listens and how to stop it (by `deadline` where the service honours one). */
export interface StartedService {
  url: string;
  close(options?: StopOptions): Promise<void>;
}

/** Starts a service from the environment, logging through `logger`, on the process's one control plane. */
type Starter = (env: NodeJS.ProcessEnv, logger: Logger, controlPlane: ServiceControlPlane) => Promise<StartedService>;

/** Services `argus up` starts, in order. Each module is loaded only when its service is started. */
export const SERVICES: Record<string, () => Promise<Starter>> = {
  dataprep: async () => (await import('../services/dataprep/main.js')).startDataprep,
  'alert-dispatch': async () => (await import('../services/alert-dispatch/main.js')).startAlertDispatch,
  // Ignores the control plane: every analysis is answered within its request.
  'frame-analysis': async () => (await import('../services/frame-analysis/main.js')).startFrameAnalysis,
};
