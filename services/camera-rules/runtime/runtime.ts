import type { ServiceControlPlane } from '../../../operator/ports/index.js';
import { ChatCompletionsClient } from '../../lib/llm/index.js';
import type { Logger } from '../../lib/log/index.js';
import { AlertDispatchSink } from '../actions/alert-sink.js';
import { realSleep } from '../actions/retry.js';
import { DataprepSearchIndex } from '../actions/search-index.js';
import { OfflineSummarizer, VlmSummarizer, type Summarizer } from '../actions/summarizer.js';
import type { CameraRulesConfig } from '../config.js';
import { EventHandler } from '../events/event-handler.js';
import { EventNotes } from '../events/event-notes.js';
import { createRecorder } from '../recorder/create-recorder.js';
import type { FrigateEventFeed } from '../recorder/frigate-events.js';
import type { Recorder } from '../recorder/recorder.js';
import { RuleBook } from '../rules/rule-book.js';

/** The parts of camera-rules the HTTP app and the watcher worker share, built from one configuration. */
export interface CameraRulesRuntime {
  recorder: Recorder;
  /** Frigate's MQTT feed (not started); undefined for the directory or without MQTT_BROKER. */
  feed?: FrigateEventFeed;
  rules: RuleBook;
  notes: EventNotes;
  summarizer: Summarizer;
  handler: EventHandler;
  /** Disconnects the feed and the recorder. */
  close(): Promise<void>;
}

/** Builds the runtime: the adapters the configuration names, the rules in the control plane's store. */
export function openRuntime(
  config: CameraRulesConfig,
  controlPlane: ServiceControlPlane,
  logger: Logger,
): CameraRulesRuntime {
  const { recorder, feed } = createRecorder(config.recorder, logger);
  const rules = new RuleBook(controlPlane.resources, controlPlane.namespace, logger);
  const notes = new EventNotes();
  const summarizer: Summarizer = config.vlm
    ? new VlmSummarizer(new ChatCompletionsClient(config.vlm), config.vlm)
    : new OfflineSummarizer();
  const handler = new EventHandler({
    rules,
    recorder,
    search: new DataprepSearchIndex({
      url: config.dataprepUrl,
      bucket: config.search.bucket,
      timeoutMs: config.search.timeoutMs,
      frameInterval: config.search.frameInterval,
      apiKeys: config.platform.apiKeys,
    }),
    alerts: new AlertDispatchSink({
      url: config.alertDispatchUrl,
      timeoutMs: config.serviceTimeoutMs,
      apiKeys: config.platform.apiKeys,
    }),
    summarizer,
    notes,
    alertTools: config.alertTools,
    logger,
    policies: config.policies,
    sleep: realSleep,
  });
  return {
    recorder,
    feed,
    rules,
    notes,
    summarizer,
    handler,
    close: async () => {
      await feed?.close();
      await recorder.close();
    },
  };
}
