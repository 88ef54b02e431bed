import { createHttpApp, type HttpApp } from '../lib/http/index.js';
import type { Logger } from '../lib/log/index.js';
import { cameraRulesErrorStyle, mapCameraRulesError } from './errors.js';
import type { Probe } from './health/reachability.js';
import type { Recorder } from './recorder/recorder.js';
import { API_VERSION, healthRoutes } from './routes/health-routes.js';
import { recorderRoutes } from './routes/recorder-routes.js';
import { responseRoutes } from './routes/response-routes.js';
import { ruleRoutes } from './routes/rule-routes.js';
import { watcherRoutes } from './routes/watcher-routes.js';
import type { RuleBook } from './rules/rule-book.js';
import type { WatcherBook } from './watchers/watcher-book.js';

/** Everything the HTTP surface needs; main.ts builds the real ones, tests their own. */
export interface CameraRulesDeps {
  logger: Logger;
  recorder: Recorder;
  /** The rules (CameraRule resources in the control plane). */
  rules: RuleBook;
  /** The per-camera watchers (CameraWatcher resources in the control plane). */
  watchers: WatcherBook;
  /** Whether dataprep (the search service) answers. */
  search: Probe;
  /** Whether alert-dispatch answers. */
  alerts: Probe;
  /** Whether the broker Frigate publishes on is connected; undefined without one. */
  broker?: Probe;
}

/** Builds the camera-rules Koa app (no listen). The contract's paths have no base path. */
export function createApp(deps: CameraRulesDeps): HttpApp {
  return createHttpApp({
    info: {
      title: 'Argus camera rules',
      version: API_VERSION,
      description:
        'Rules that map object-detection labels to actions per camera, cameras and events from a network video ' +
        'recorder (Frigate, or a recordings directory in its layout), per-camera watchers and rule results.',
      tags: {
        health: 'Liveness and whether the recorder, search, alert-dispatch and the broker answer',
        recorder: 'Cameras and events from the network video recorder',
        rules: 'Label → action rules per camera and the results of the rules that ran',
        watchers: 'Per-camera watchers: which cameras are watched',
      },
    },
    service: 'camera-rules',
    logger: deps.logger,
    errors: cameraRulesErrorStyle(),
    mapError: mapCameraRulesError,
    routes: [
      ...healthRoutes({
        recorderKind: deps.recorder.kind,
        recorder: (signal) => deps.recorder.reachability(signal),
        search: deps.search,
        alerts: deps.alerts,
        broker: deps.broker,
      }),
      ...recorderRoutes(deps.recorder),
      ...responseRoutes(deps.rules),
      ...ruleRoutes(deps.rules),
      ...watcherRoutes(deps.watchers, deps.search),
    ],
  });
}
