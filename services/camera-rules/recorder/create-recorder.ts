import type { Logger } from '../../lib/log/index.js';
import type { RecorderConfig } from '../config.js';
import { DetectionLog } from './detection-log.js';
import { DirectoryRecorder } from './directory-recorder.js';
import { FrigateEventFeed } from './frigate-events.js';
import { FrigateRecorder } from './frigate-recorder.js';
import type { Recorder } from './recorder.js';
import type { SegmentAnalyser } from './segment-analysis.js';

/** The recorder adapter the configuration names, and Frigate's MQTT feed when a broker is configured. */
export interface RecorderParts {
  recorder: Recorder;
  /** Frigate's MQTT messages; undefined for the directory or without MQTT_BROKER. Not started. */
  feed?: FrigateEventFeed;
}

/**
 * main.ts's choice of adapter, kept here so that the watcher worker makes the same one; `analyser` finds the
 * directory recorder's events in new segments (dataprep).
 */
export function createRecorder(config: RecorderConfig, logger: Logger, analyser: SegmentAnalyser): RecorderParts {
  switch (config.kind) {
    case 'directory':
      return {
        recorder: new DirectoryRecorder(config.dir, { analyser, log: new DetectionLog(config.detectionsDir) }),
      };
    case 'frigate':
      return {
        recorder: new FrigateRecorder(config),
        feed: config.mqttBroker
          ? new FrigateEventFeed({ broker: config.mqttBroker, topicPrefix: config.topicPrefix, logger })
          : undefined,
      };
  }
}
