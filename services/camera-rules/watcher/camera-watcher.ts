import type { CameraWatcher } from '../../../operator/api/index.js';
import { updateStatusWithRetry, type ResourceStore, type Worker } from '../../../operator/ports/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { Sleep } from '../actions/retry.js';
import type { EventType, RuleOutcome } from '../events/event-handler.js';
import type { EventNotes } from '../events/event-notes.js';
import type { FrigateMessage } from '../recorder/frigate-events.js';
import type { Recorder, RecorderEvent } from '../recorder/recorder.js';
import type { RecordingFollower, RecordingProgress } from './recording-follower.js';

/** Pushed recorder events (Frigate's MQTT feed), as the watcher uses them. */
export interface EventFeed {
  onMessage(listener: (message: FrigateMessage) => void): () => void;
  /** Called on every (re)subscription: the moment to catch up on what was missed. */
  onSubscribed(listener: () => void): () => void;
}

/** What the watcher worker needs (main.ts and the worker command build it from one configuration). */
export interface CameraWatcherWorkerDeps {
  resources: ResourceStore;
  recorder: Recorder;
  /** undefined: the recorder is only polled (the directory recorder, or Frigate without a broker). */
  feed?: EventFeed;
  handler: { handle(type: EventType, event: RecorderEvent, signal?: AbortSignal): Promise<RuleOutcome[]> };
  notes: EventNotes;
  logger: Logger;
  /** Time between catch-ups with the recorder (also with a feed: what a dropped message missed is found). */
  pollMs: number;
  sleep: Sleep;
  clock?: () => Date;
  /** Most events one catch-up reads (default 1000), oldest first in pages of up to 100; the rest waits for the next. */
  catchUpMax?: number;
  /** The camera's new recordings to search (Frigate); undefined: the recorder has none apart from its events. */
  recordings?: RecordingFollower;
}

/** Events per `/api/events` page of a catch-up. */
const PAGE = 100;
/** Handled events a run remembers. */
const DONE_MAX = 5000;

/**
 * The worker `camera-watcher` (CAMERA_WATCHER_WORKER): follows the camera of one CameraWatcher (`context.name` in
 * `context.namespace`) until `context.signal` aborts, then resolves. Events arrive from the feed (Frigate's
 * `<prefix>/events` for the camera; descriptions and review summaries are noted for summaries) and from catch-ups
 * with the recorder's event list, oldest first (`after` the last event handled, kept in the watcher's status as
 * `lastEventStart`; a new watcher starts at its creation), at start, after each feed (re)subscription and every
 * `pollMs`. Events are
 * handled one at a time, oldest first: `new` (also late, for an event first seen ended) then `end`; the event
 * handler fires each rule once per event, so overlapping catch-ups and repeated messages cost nothing. After each
 * ended event the status gets `lastEventId`, `lastEventStart` (never past an event still in progress, or one whose
 * action another replica's claim holds, so a restart or the next catch-up comes back to it), `lastEventTime` and
 * `eventsHandled`. With `recordings` (Frigate), each round also sends the camera's new finished recordings to search
 * (RecordingFollower), from the status' `lastRecordingEnd` (a new watcher: its creation), writing `lastRecordingEnd`
 * and `recordingsIndexed` after each clip, so a restart goes on where it stopped. A watcher that is gone or disabled
 * returns at once.
 */
export function cameraWatcherWorker(deps: CameraWatcherWorkerDeps): Worker {
  return async ({ namespace, name, signal }) => {
    const { resources, recorder, feed, handler, notes, logger } = deps;
    const clock = deps.clock ?? (() => new Date());
    const watcher = await resources.get('CameraWatcher', namespace, name);
    if (!watcher || !watcher.spec.enabled) return;
    const camera = watcher.spec.camera;
    const log = { camera, watcher: `${namespace}/${name}` };
    let cursor = watcher.status?.lastEventStart ?? startOf(watcher, clock);
    const inProgress = new Map<string, number>();
    // Events whose `new` rules another replica's claim holds: their `end` does not settle them (the next catch-up
    // offers the `new` again, and runs it here if that replica stopped and its lease ran out).
    const newHeld = new Set<string>();
    // What this run already handled (`type:id`), bounded: catch-ups overlap each other and the feed.
    const done = new Set<string>();
    let chain: Promise<void> = Promise.resolve();

    const writeStatus = async (event: RecorderEvent) => {
      const starts = [...inProgress.values()];
      const settled = starts.length ? Math.min(event.start_time, ...starts.map((s) => s - 1e-6)) : event.start_time;
      cursor = Math.max(cursor, Math.max(0, settled));
      await updateStatusWithRetry(resources, 'CameraWatcher', namespace, name, (latest) => ({
        ...latest.status,
        lastEventId: event.id.slice(0, 256),
        lastEventStart: cursor,
        lastEventTime: clock().toISOString(),
        eventsHandled: (latest.status?.eventsHandled ?? 0) + 1,
      }));
    };

    const handle = async (type: EventType, event: RecorderEvent) => {
      const key = `${type}:${event.id}`;
      if (signal.aborted || done.has(key)) return;
      if (event.end_time === null && type !== 'end') inProgress.set(event.id, event.start_time);
      else if (!newHeld.has(event.id) || type === 'new') inProgress.delete(event.id);
      try {
        const outcomes = await handler.handle(type, event, signal);
        if (outcomes.some((o) => o.state === 'held')) {
          // Another replica's claim is running an action: the catch-up point stays before the event, and the next
          // catch-up offers it again (its action is run here if that replica stopped and its lease ran out).
          inProgress.set(event.id, event.start_time);
          if (type === 'new') newHeld.add(event.id);
          return;
        }
        if (type === 'new') newHeld.delete(event.id);
        done.add(key);
        if (done.size > DONE_MAX) done.delete(done.values().next().value as string);
        // Seen before (another run or replica handled it): not counted again.
        const seen = outcomes.length > 0 ? outcomes.every((o) => o.state === 'duplicate') : event.start_time <= cursor;
        if (type === 'end' && !seen) await writeStatus(event);
      } catch (error) {
        // The cursor stays: the next catch-up offers the event again (the handler's claims keep it at once per rule).
        if (!signal.aborted) {
          logger.warn('watcher could not handle an event', { ...log, event: event.id, error: String(error) });
        }
      }
    };
    const enqueue = (type: EventType, event: RecorderEvent) => {
      chain = chain.then(() => handle(type, event));
    };

    // Oldest first, a page at a time from the catch-up point: after a long outage the oldest events are handled first
    // and the point moves over them, so a catch-up bounded by `catchUpMax` leaves the rest to the next one. `after` is
    // strict, so events sharing a start time are handled together: a group the page's end or the bound would cut is
    // left whole to the next page or catch-up (each page asks for one more event than there is room for, to see it);
    // a group that begins a page is taken as far as the page holds it.
    const catchUp = async () => {
      // The catch-up point is the start of the last event settled, and others may share that start (a stop between
      // them): the first page takes the point's own moment again — what was handled is not run twice (claims).
      let after = Math.max(0, cursor - 1e-6);
      const max = deps.catchUpMax ?? 1000;
      for (let read = 0; read < max && !signal.aborted;) {
        const room = max - read;
        const query = { camera, after, limit: Math.min(PAGE, room + 1), analyse: true, oldestFirst: true };
        const page = await recorder.events(query, signal);
        const full = page.length === query.limit;
        let taken = page.slice(0, room);
        const cut = taken.length < page.length ? page[taken.length].start_time : full ? page.at(-1)!.start_time : null;
        const before = taken.filter((event) => event.start_time !== cut);
        // Nothing before the group: the group is taken as far as the page holds it (past the bound if need be).
        taken = before.length > 0 ? before : page.filter((event) => event.start_time === cut || cut === null);
        for (const event of taken) {
          enqueue('new', event);
          if (event.end_time !== null) enqueue('end', event);
        }
        read += taken.length;
        if (!full || taken.length === 0) break;
        after = taken[taken.length - 1].start_time;
      }
      await chain;
    };
    const safeCatchUp = () =>
      catchUp().catch((error) => {
        if (!signal.aborted) logger.warn('watcher catch-up failed; retried later', { ...log, error: String(error) });
      });

    // Recordings go to search from `lastRecordingEnd` (a new watcher: its creation), each clip's end then written.
    let recordingsFrom = watcher.status?.lastRecordingEnd ?? startOf(watcher, clock);
    const recordingProgress = async ({ position, clip }: RecordingProgress) => {
      recordingsFrom = position;
      await updateStatusWithRetry(resources, 'CameraWatcher', namespace, name, (latest) => ({
        ...latest.status,
        lastRecordingEnd: Math.max(position, latest.status?.lastRecordingEnd ?? 0),
        recordingsIndexed: (latest.status?.recordingsIndexed ?? 0) + (clip ? 1 : 0),
      }));
      if (clip) logger.info('recording sent to search', { ...log, ...clip, videoId: clip.indexed.videoId });
    };
    const followRecordings = async () => {
      if (!deps.recordings) return;
      try {
        await deps.recordings.catchUp(camera, recordingsFrom, clock().getTime() / 1000, recordingProgress, signal);
      } catch (error) {
        if (!signal.aborted)
          logger.warn('recordings could not go to search; retried later', { ...log, error: String(error) });
      }
    };

    const stops: Array<() => void> = [];
    if (feed) {
      stops.push(
        feed.onMessage((message) => {
          if (message.kind === 'description') notes.note(message.id, { description: message.description });
          else if (message.kind === 'review-summary') {
            for (const id of message.detections) notes.note(id, { reviewSummary: message.summary });
          } else if (message.event.camera === camera && message.type !== 'update') enqueue(message.type, message.event);
        }),
        feed.onSubscribed(() => void safeCatchUp()),
      );
    }
    logger.info('camera watcher started', { ...log, after: cursor, feed: feed !== undefined });
    try {
      while (!signal.aborted) {
        await safeCatchUp();
        await followRecordings();
        try {
          await deps.sleep(deps.pollMs, signal);
        } catch {
          break;
        }
      }
    } finally {
      stops.forEach((stop) => stop());
      await chain;
      logger.info('camera watcher stopped', log);
    }
  };
}

/** Where a watcher without a status starts: when it was created (events before it are not its business). */
function startOf(watcher: CameraWatcher, clock: () => Date): number {
  const created = Date.parse(watcher.metadata.creationTimestamp ?? '');
  return (Number.isFinite(created) ? created : clock().getTime()) / 1000;
}
