import type { ServiceControlPlane } from '../../../operator/ports/index.js';
import { ChatCompletionsClient } from '../../lib/llm/index.js';
import type { Logger } from '../../lib/log/index.js';
import { AlertDispatchSink } from '../actions/alert-sink.js';
import { realSleep } from '../actions/retry.js';
import { DataprepSegmentAnalyser } from '../actions/dataprep-segment-analyser.js';
import { DataprepSearchIndex } from '../actions/search-index.js';
import { OfflineSummarizer, VlmSummarizer, type Summarizer } from '../actions/summarizer.js';
import type { CameraRulesConfig } from '../config.js';
import { EventHandler } from '../events/event-handler.js';
import { EventNotes } from '../events/event-notes.js';
import { createRecorder } from '../recorder/create-recorder.js';
import type { FrigateEventFeed } from '../recorder/frigate-events.js';
import type { Recorder } from '../recorder/recorder.js';
import { RuleBook } from '../rules/rule-book.js';
import { RuleCache } from '../rules/rule-cache.js';
import { RecordingFollower } from '../watcher/recording-follower.js';

/** The parts of camera-rules the HTTP app and the watcher worker share, built from one configuration. */
export interface CameraRulesRuntime {
  recorder: Recorder;
  /** Frigate's MQTT feed (not started); undefined for the directory or without MQTT_BROKER. */
  feed?: FrigateEventFeed;
  rules: RuleBook;
  notes: EventNotes;
  summarizer: Summarizer;
  handler: EventHandler;
  /**
   * The watchers' recordings to search: with a recorder that lists its recordings (Frigate) and
   * CAMERA_RULES_INDEX_RECORDINGS on, else undefined.
   */
  recordings?: RecordingFollower;
  /** Disconnects the feed and the recorder. */
  close(): Promise<void>;
}

/**
 * Builds the runtime: the adapters the configuration names, the rules in the control plane's store. Events are
 * matched against a RuleCache (the store's watch) rather than a listing per event, embedded and in the cluster's
 * watcher pods alike (CAMERA_WATCHER_WORKER_RULES grants list and watch).
 */
export function openRuntime(
  config: CameraRulesConfig,
  controlPlane: ServiceControlPlane,
  logger: Logger,
): CameraRulesRuntime {
  const search = new DataprepSearchIndex({
    url: config.dataprepUrl,
    bucket: config.search.bucket,
    timeoutMs: config.search.timeoutMs,
    frameInterval: config.search.frameInterval,
    apiKeys: config.platform.apiKeys,
  });
  const analyser = new DataprepSegmentAnalyser(search, {
    url: config.dataprepUrl,
    timeoutMs: config.serviceTimeoutMs,
    apiKeys: config.platform.apiKeys,
  });
  const { recorder, feed } = createRecorder(config.recorder, logger, analyser);
  const rules = new RuleBook(controlPlane.resources, controlPlane.namespace, logger);
  const matching = new RuleCache(controlPlane.resources, controlPlane.namespace);
  const notes = new EventNotes();
  const summarizer: Summarizer = config.vlm
    ? new VlmSummarizer(new ChatCompletionsClient(config.vlm), config.vlm)
    : new OfflineSummarizer();
  const handler = new EventHandler({
    rules,
    matching,
    recorder,
    search,
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
    claimLeaseMs: config.claimLeaseMs,
  });
  const listing = config.indexRecordings ? recorder.recordings?.bind(recorder) : undefined;
  const recordings = listing
    ? new RecordingFollower({ kind: recorder.kind, clip: recorder.clip.bind(recorder), recordings: listing }, search)
    : undefined;
  return {
    recorder,
    feed,
    recordings,
    rules,
    notes,
    summarizer,
    handler,
    close: async () => {
      await matching.close();
      await feed?.close();
      await recorder.close();
    },
  };
}
