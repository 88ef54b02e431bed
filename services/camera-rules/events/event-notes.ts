/** What Frigate said about an event besides its detections. */
export interface EventNote {
  /** Frigate's GenAI description (`tracked_object_update` type description, or `data.description`). */
  description?: string;
  /** Frigate's GenAI review summary of the review item holding the event (`reviews`, `data.metadata`). */
  reviewSummary?: string;
}

/** Most events remembered; the oldest noted is forgotten first. */
const MAX_NOTES = 10_000;

/** Frigate's descriptions and review summaries by event id, bounded, for summaries of those events. */
export class EventNotes {
  private readonly notes = new Map<string, EventNote>();

  constructor(private readonly max = MAX_NOTES) {}

  note(eventId: string, note: EventNote): void {
    const merged = { ...this.notes.get(eventId), ...note };
    this.notes.delete(eventId);
    this.notes.set(eventId, merged);
    while (this.notes.size > this.max) this.notes.delete(this.notes.keys().next().value as string);
  }

  get(eventId: string): EventNote {
    return this.notes.get(eventId) ?? {};
  }
}
