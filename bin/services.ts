import type { Logger } from '../services/lib/log/index.js';

/** A started service: where it listens and how to stop it. */
export interface StartedService {
  url: string;
  close(): Promise<void>;
}

type Starter = (env: NodeJS.ProcessEnv, logger?: Logger) => Promise<StartedService>;

/** Services `argus up` starts, in order. Each module is loaded only when its service is started. */
export const SERVICES: Record<string, () => Promise<Starter>> = {
  dataprep: async () => (await import('../services/dataprep/main.js')).startDataprep,
  'alert-dispatch': async () => (await import('../services/alert-dispatch/main.js')).startAlertDispatch,
};
