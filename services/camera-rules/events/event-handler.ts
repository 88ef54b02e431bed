import type { CameraRuleResult } from '../../../operator/api/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { Alert, AlertSink } from '../actions/alert-sink.js';
import { RetriesExhaustedError, withRetry, type RetryPolicy, type Sleep } from '../actions/retry.js';
import type { MediaToIndex, SearchIndex } from '../actions/search-index.js';
import { ServiceCallError } from '../actions/service-error.js';
import { fallbackLabel, offlineSummary, type Summarizer } from '../actions/summarizer.js';
import {
  MediaNotReadyError,
  RecorderUnavailableError,
  type Recorder,
  type RecorderEvent,
} from '../recorder/recorder.js';
import type { RuleBook, RuleView } from '../rules/rule-book.js';
import type { EventNotes } from './event-notes.js';

/** The type of a recorder event message (Frigate's `<prefix>/events` `type`). */
export type EventType = 'new' | 'update' | 'end';

/** Retries of the two kinds of step. */
export interface HandlerPolicies {
  /** Waiting for the recorder's clip or snapshot to be final (Frigate keeps the latest segments in its cache). */
  media: RetryPolicy;
  /** An action's call to dataprep, alert-dispatch or the VLM. */
  action: RetryPolicy;
}

/** Defaults: the clip may take ~a minute to leave Frigate's cache; a service call is tried 4 times over ~7 s. */
export const DEFAULT_POLICIES: HandlerPolicies = {
  media: { attempts: 8, baseDelayMs: 1000, maxDelayMs: 15_000 },
  action: { attempts: 4, baseDelayMs: 1000, maxDelayMs: 8000 },
};

/** What the handler needs. */
export interface EventHandlerDeps {
  /** Claims and results (always the store itself). */
  rules: RuleBook;
  /** Where the rules to match an event against are read: a RuleCache (the store's watch); default `rules`. */
  matching?: { list(signal?: AbortSignal): Promise<RuleView[]> };
  recorder: Recorder;
  search: SearchIndex;
  alerts: AlertSink;
  summarizer: Summarizer;
  notes: EventNotes;
  /** Tools alert-dispatch is asked to run for an alert. */
  alertTools: string[];
  logger: Logger;
  policies?: HandlerPolicies;
  sleep: Sleep;
  clock?: () => Date;
  /**
   * How long a claim lives without renewal (default 60 s): the action's runner renews it every third of that, and
   * a pending result older than it belongs to a replica that stopped, so the event's next handling runs it again.
   */
  claimLeaseMs?: number;
}

/** Default lease of a claimed event's action. */
const DEFAULT_CLAIM_LEASE_MS = 60_000;

/** What one matching rule did with one event. */
export interface RuleOutcome {
  ruleId: string;
  /**
   * `duplicate`: the rule had already fired on this event (here, on another replica, or before a restart); `held`:
   * another replica's live claim is running it (offer the event again later: if that replica stops, its lease ends
   * and the next handling runs the action).
   */
  state: CameraRuleResult['state'] | 'duplicate' | 'held';
  message?: string;
}

/** Whether `rule` fires on an event of `type` from `source`. */
export function ruleMatches(rule: RuleView, type: EventType, event: RecorderEvent, source: string): boolean {
  if (type !== rule.event_type) return false;
  if (type === 'end' && event.end_time === null) return false;
  if (rule.label.toLowerCase() !== event.label.toLowerCase()) return false;
  if (rule.camera !== null && rule.camera !== event.camera) return false;
  return rule.source === null || rule.source === source;
}

const mediaRetryable = (error: unknown) =>
  error instanceof MediaNotReadyError || error instanceof RecorderUnavailableError;
const callRetryable = (error: unknown) => !(error instanceof ServiceCallError) || error.retryable;
const reason = (error: unknown) => (error as Error)?.message ?? String(error);

/** Tags of indexed media: search filters on them (`POST /search {"tags": ["event:<id>"]}`). */
export function eventTags(event: RecorderEvent, source: string, ruleId: string): string[] {
  return [
    `camera:${event.camera}`,
    `label:${event.label}`,
    `event:${event.id}`,
    ...event.zones.map((zone) => `zone:${zone}`),
    `source:${source}`,
    `rule:${ruleId}`,
  ].map((tag) => tag.slice(0, 256));
}

/**
 * Turns recorder events into rule actions: every rule that matches fires once per event — the event is claimed in
 * the rule's status (a CameraRule resource) before the action runs, so the same event again, on another replica or
 * after a restart, does nothing. `add_to_search` indexes the event's clip (waiting, with bounded back-off, for the
 * recorder to make it final; the snapshot when there is no clip) through dataprep with the event's tags;
 * `summarize` writes a summary (VLM or offline); `alert` sends the event and its snapshot to alert-dispatch. A
 * failing call is retried with back-off; the result, kept in the rule's status, says what happened or why it failed.
 */
export class EventHandler {
  private readonly policies: HandlerPolicies;
  private readonly clock: () => Date;

  constructor(private readonly deps: EventHandlerDeps) {
    this.policies = deps.policies ?? DEFAULT_POLICIES;
    this.clock = deps.clock ?? (() => new Date());
  }

  /** Fires every matching rule once on `event`; resolves when each has settled. */
  async handle(type: EventType, event: RecorderEvent, signal?: AbortSignal): Promise<RuleOutcome[]> {
    const source = this.deps.recorder.kind;
    const rules = (await (this.deps.matching ?? this.deps.rules).list(signal)).filter((rule) =>
      ruleMatches(rule, type, event, source),
    );
    return Promise.all(rules.map((rule) => this.fire(rule, event, source, signal)));
  }

  private async fire(rule: RuleView, event: RecorderEvent, source: string, signal?: AbortSignal): Promise<RuleOutcome> {
    const { rules, logger } = this.deps;
    const leaseMs = this.deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS;
    const claim = await rules.claim(rule.id, event.id, event.camera, this.clock(), leaseMs);
    if (claim === 'done') return { ruleId: rule.id, state: 'duplicate' };
    if (claim === 'held') return { ruleId: rule.id, state: 'held' };
    if (claim === 'resumed') {
      logger.warn('rule action resumed: the replica that claimed it stopped renewing its lease', {
        rule: rule.id,
        event: event.id,
      });
    }
    const heartbeat = setInterval(() => {
      rules.renew(rule.id, event.id, this.clock()).catch((error) => {
        logger.warn('could not renew a rule action claim', { rule: rule.id, event: event.id, error: reason(error) });
      });
    }, leaseMs / 3);
    heartbeat.unref();
    try {
      return await this.run(rule, event, source, claim === 'resumed', signal);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async run(
    rule: RuleView,
    event: RecorderEvent,
    source: string,
    resumed: boolean,
    signal?: AbortSignal,
  ): Promise<RuleOutcome> {
    const { rules, logger } = this.deps;
    let attempts = 0;
    const counted =
      <T>(step: () => Promise<T>) =>
      async () => {
        attempts++;
        return step();
      };
    let outcome: Omit<CameraRuleResult, 'eventId' | 'camera' | 'attempts' | 'updatedAt'>;
    try {
      outcome = await this.act(rule, event, source, counted, signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      outcome = { state: 'failed', message: reason(error) };
      logger.warn('rule action failed', { rule: rule.id, event: event.id, action: rule.action, error: reason(error) });
    }
    if (resumed) {
      outcome = {
        ...outcome,
        message: `run again after the replica that claimed it stopped: ${outcome.message ?? ''}`,
      };
    }
    await rules.settle(rule.id, event.id, { ...outcome, attempts, updatedAt: this.clock().toISOString() });
    return { ruleId: rule.id, state: outcome.state, message: outcome.message };
  }

  private async act(
    rule: RuleView,
    event: RecorderEvent,
    source: string,
    counted: <T>(step: () => Promise<T>) => () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<Omit<CameraRuleResult, 'eventId' | 'camera' | 'attempts' | 'updatedAt'>> {
    const { sleep } = this.deps;
    const call = <T>(step: () => Promise<T>) =>
      withRetry(counted(step), { policy: this.policies.action, sleep, retryable: callRetryable, signal });
    switch (rule.action) {
      case 'add_to_search': {
        const media = await this.media(event, signal);
        const tags = eventTags(event, source, rule.id);
        const { value } = await call(() => this.deps.search.add({ ...media.item, tags }, signal));
        return {
          state: 'succeeded',
          message: `${media.what} indexed by dataprep: ${value.message}`,
          videoId: value.videoId,
          bucketName: value.bucketName,
        };
      }
      case 'summarize': {
        const snapshot = await this.snapshot(event, signal);
        const note = this.deps.notes.get(event.id);
        const input = { event, snapshot, note };
        const { summarizer } = this.deps;
        try {
          const { value } = await call(() => summarizer.summarize(input, signal));
          return { state: 'succeeded', message: `summary (${summarizer.kind})`, result: value };
        } catch (error) {
          // The VLM failed for good: the offline summary instead, labelled with why (never passed off as the model's).
          if (signal?.aborted || summarizer.kind === 'offline') throw error;
          const why = reason(error);
          this.deps.logger.warn('VLM summary failed; offline summary instead', { rule: rule.id, event: event.id, why });
          return {
            state: 'succeeded',
            message: `offline summary: the vision-language model failed: ${why}`,
            result: offlineSummary(input, fallbackLabel(why)),
          };
        }
      }
      case 'alert': {
        const snapshot = await this.snapshot(event, signal);
        const alert = this.alert(rule, event, source, snapshot);
        const { value } = await call(() => this.deps.alerts.send(alert, signal));
        return { state: 'succeeded', message: value, result: alert.reason };
      }
    }
  }

  /** The event's clip once final (bounded back-off), else its snapshot; why neither, when so. */
  private async media(
    event: RecorderEvent,
    signal?: AbortSignal,
  ): Promise<{ item: Omit<MediaToIndex, 'tags'>; what: string }> {
    const { recorder, sleep } = this.deps;
    let clipProblem = 'the event has no clip';
    if (event.has_clip && event.end_time !== null) {
      const end = event.end_time;
      try {
        const { value } = await withRetry(() => recorder.clip(event.camera, event.start_time, end, signal), {
          policy: this.policies.media,
          sleep,
          retryable: mediaRetryable,
          signal,
        });
        return {
          item: { bytes: value, filename: `${event.id}.mp4`, contentType: 'video/mp4' },
          what: `clip ${event.start_time}–${end}`,
        };
      } catch (error) {
        if (signal?.aborted) throw error;
        clipProblem = `no clip: ${reason(error)}`;
      }
    } else if (event.end_time === null) {
      clipProblem = 'the event is in progress (no final clip)';
    }
    const snapshot = event.has_snapshot ? await this.snapshot(event, signal) : undefined;
    if (!snapshot) throw new Error(`nothing to index: ${clipProblem}, and no snapshot`);
    return {
      item: { bytes: snapshot, filename: `${event.id}.jpg`, contentType: 'image/jpeg' },
      what: `snapshot (${clipProblem})`,
    };
  }

  /** The event's snapshot, or undefined when it has none or it cannot be had within the media policy. */
  private async snapshot(event: RecorderEvent, signal?: AbortSignal): Promise<Buffer | undefined> {
    if (!event.has_snapshot) return undefined;
    try {
      const { value } = await withRetry(() => this.deps.recorder.snapshot(event, signal), {
        policy: this.policies.media,
        sleep: this.deps.sleep,
        retryable: mediaRetryable,
        signal,
      });
      return value;
    } catch (error) {
      if (signal?.aborted) throw error;
      if (!(error instanceof RetriesExhaustedError)) throw error;
      this.deps.logger.warn('event snapshot unavailable', { event: event.id, error: reason(error) });
      return undefined;
    }
  }

  private alert(rule: RuleView, event: RecorderEvent, source: string, snapshot?: Buffer): Alert {
    const who = event.sub_label ? `${event.label} (${event.sub_label})` : event.label;
    return {
      alert_type: 'camera_rule',
      source_id: event.camera,
      alert_name: rule.id,
      answer: 'YES',
      reason: `${who} on camera ${event.camera} matched rule ${rule.id}`,
      metadata: {
        rule_id: rule.id,
        event_id: event.id,
        camera: event.camera,
        label: event.label,
        sub_label: event.sub_label,
        zones: event.zones,
        start_time: event.start_time,
        end_time: event.end_time,
        top_score: event.top_score,
        source,
      },
      timestamp: new Date(event.start_time * 1000).toISOString(),
      tools: this.deps.alertTools,
      payloads: snapshot
        ? [
            {
              kind: 'image',
              mime_type: 'image/jpeg',
              encoding: 'base64',
              data_base64: snapshot.toString('base64'),
              metadata: { event_id: event.id, camera: event.camera },
            },
          ]
        : [],
    };
  }
}
