import type { ServiceControlPlane } from '../operator/ports/index.js';
import type { SettingsScope } from '../services/lib/config/index.js';
import type { StopOptions } from '../services/lib/http/index.js';
import type { Logger } from '../services/lib/log/index.js';

/** A started service: where it listens and how to stop it (by `deadline` where the service honours one). */
export interface StartedService {
  url: string;
  close(options?: StopOptions): Promise<void>;
}

/** What a service is started with besides its configuration. */
export interface StartContext {
  /** The whole environment (alert-dispatch fills `${NAME}` in its MCP file from it). */
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The process's one control plane (services without resources ignore it). */
  controlPlane: ServiceControlPlane;
  /**
   * The process's MQTT broker (MQTT_BROKER, or the broker `argus up` embeds without it), given to the services whose
   * entry says `mqtt`; undefined for the others.
   */
  mqttBroker?: string;
  /** Root URLs of the services this process started before this one, by name (`argus up`: its own peers). */
  peers?: Record<string, string>;
}

/**
 * One service of the registry: its configuration is loaded (and refused) apart from starting it, so that `argus up`
 * validates every service before any of them listens.
 */
export interface ServiceEntry<C = unknown> {
  /** The variables the service reads and the prefixes it owns. */
  settings: SettingsScope;
  /** Validates the service's variables; throws ConfigError listing every problem, starts nothing. */
  loadConfig(env: NodeJS.ProcessEnv): C;
  start(config: C, context: StartContext): Promise<StartedService>;
  /** The service publishes or subscribes on the process's MQTT broker: `argus` opens one for it (services/lib/mqtt). */
  mqtt?: true;
}

/**
 * One registry entry, its configuration type inferred from its loader (the registry holds entries of every type; a
 * method's parameter is bivariant, so each fits ServiceEntry<unknown>).
 */
function entry<C>(service: ServiceEntry<C>): ServiceEntry {
  return service;
}

/** Services `argus up` starts, in order. Each module is loaded only when its service is named. */
export const SERVICES: Record<string, () => Promise<ServiceEntry>> = {
  dataprep: async () => {
    const { dataprepSettings, loadDataprepConfig } = await import('../services/dataprep/config.js');
    const { startDataprep } = await import('../services/dataprep/main.js');
    return entry({
      settings: dataprepSettings,
      loadConfig: loadDataprepConfig,
      start: (config, { logger, controlPlane }) => startDataprep(config, logger, controlPlane),
    });
  },
  'alert-dispatch': async () => {
    const { alertDispatchSettings, loadAlertDispatchConfig } = await import('../services/alert-dispatch/config.js');
    const { startAlertDispatch } = await import('../services/alert-dispatch/main.js');
    return entry({
      settings: alertDispatchSettings,
      loadConfig: loadAlertDispatchConfig,
      // publish_mqtt publishes on the process's broker: the embedded one caption-runs shares without MQTT_BROKER.
      start: (config, { env, logger, mqttBroker }) =>
        startAlertDispatch({ ...config, mqttBroker: mqttBroker ?? config.mqttBroker }, env, logger),
      mqtt: true,
    });
  },
  // Ignores the control plane: every analysis is answered within its request.
  'frame-analysis': async () => {
    const { frameAnalysisSettings, loadFrameAnalysisConfig } = await import('../services/frame-analysis/config.js');
    const { startFrameAnalysis } = await import('../services/frame-analysis/main.js');
    return entry({
      settings: frameAnalysisSettings,
      loadConfig: loadFrameAnalysisConfig,
      start: (config, { logger }) => startFrameAnalysis(config, logger),
    });
  },
  // Ignores the control plane: captions are stored and questions answered within their requests.
  'caption-qa': async () => {
    const { captionQaSettings, loadCaptionQaConfig } = await import('../services/caption-qa/config.js');
    const { startCaptionQa } = await import('../services/caption-qa/main.js');
    return entry({
      settings: captionQaSettings,
      loadConfig: loadCaptionQaConfig,
      start: (config, { logger }) => startCaptionQa(config, logger),
    });
  },
  // Runs are CaptionRun resources in the control plane; the service only writes and reads them.
  'caption-runs': async () => {
    const { captionRunsSettings, loadCaptionRunsConfig } = await import('../services/caption-runs/config.js');
    const { startCaptionRunsFrom } = await import('../services/caption-runs/main.js');
    return entry({
      settings: captionRunsSettings,
      loadConfig: loadCaptionRunsConfig,
      // Without their URLs set, captions go to this process's caption-qa and alert rules to its alert-dispatch.
      start: (config, { logger, controlPlane, mqttBroker, peers = {} }) =>
        startCaptionRunsFrom(
          {
            ...config,
            captionQaUrl: config.captionQaUrl ?? (peers['caption-qa'] && `${peers['caption-qa']}/api`),
            alertsUrl: config.alertsUrl ?? (peers['alert-dispatch'] && `${peers['alert-dispatch']}/api/v1`),
          },
          controlPlane,
          mqttBroker ?? config.mqttBroker,
          logger,
        ),
      mqtt: true,
    });
  },
  // Rules and watchers are resources (CameraRule, CameraWatcher) in the control plane, shared by every replica.
  'camera-rules': async () => {
    const { cameraRulesSettings, loadCameraRulesConfig } = await import('../services/camera-rules/config.js');
    const { startCameraRules } = await import('../services/camera-rules/main.js');
    return entry({
      settings: cameraRulesSettings,
      loadConfig: loadCameraRulesConfig,
      start: (config, { logger, controlPlane }) => startCameraRules(config, controlPlane, logger),
    });
  },
};
