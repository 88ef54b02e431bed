import type { ChatCompletionsClient } from '../../lib/llm/index.js';
import type { EventNote } from '../events/event-notes.js';
import type { RecorderEvent } from '../recorder/recorder.js';

/** What a summary is made from. */
export interface SummaryInput {
  event: RecorderEvent;
  /** The event's snapshot (JPEG), when the recorder has one. */
  snapshot?: Buffer;
  note: EventNote;
}

/** Writes a summary of one event. */
export interface Summarizer {
  /** `vlm` or `offline`, shown in health. */
  readonly kind: string;
  summarize(input: SummaryInput, signal?: AbortSignal): Promise<string>;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** The event's detections in one sentence (who, where, when, how sure). */
export function describeDetections(event: RecorderEvent): string {
  const who = event.sub_label ? `${event.label} (${event.sub_label})` : event.label;
  const when =
    event.end_time === null
      ? `since ${iso(event.start_time)} (in progress)`
      : `from ${iso(event.start_time)} to ${iso(event.end_time)} (${Math.round(event.end_time - event.start_time)} s)`;
  const zones = event.zones.length ? `, in zones ${event.zones.join(', ')}` : '';
  const score = event.top_score === null ? '' : `; top score ${event.top_score.toFixed(2)}`;
  return `A ${who} on camera ${event.camera} ${when}${zones}${score}.`;
}

/** Frigate's own words about the event, when it sent any. */
function frigateWords(note: EventNote, event: RecorderEvent): string {
  const description = note.description ?? (typeof event.data.description === 'string' ? event.data.description : '');
  return [
    description ? `Frigate's description: ${description}` : '',
    note.reviewSummary ? `Frigate's review summary: ${note.reviewSummary}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** Label of offline summaries: what they are built from, so nobody takes them for a model's. */
export const OFFLINE_LABEL = 'Summary from the recorder’s detections (no vision-language model is configured):';

/** Label of the offline summary written because the configured vision-language model failed (`why`). */
export function fallbackLabel(why: string): string {
  return `Summary from the recorder’s detections (the vision-language model failed: ${why}):`;
}

/** The detections and Frigate's own words after `label`. */
export function offlineSummary({ event, note }: SummaryInput, label = OFFLINE_LABEL): string {
  return [label, describeDetections(event), frigateWords(note, event)].filter(Boolean).join(' ');
}

/** Without a vision-language model: the detections and Frigate's own description, labelled as such. */
export class OfflineSummarizer implements Summarizer {
  readonly kind = 'offline';

  async summarize(input: SummaryInput): Promise<string> {
    return offlineSummary(input);
  }
}

/**
 * A vision-language model over the OpenAI-compatible API (VLM_* settings): the snapshot as an image part and the
 * detections and Frigate's words as text; the answer is labelled with the model's name.
 */
export class VlmSummarizer implements Summarizer {
  readonly kind = 'vlm';

  constructor(
    private readonly client: ChatCompletionsClient,
    private readonly settings: { maxTokens: number; temperature: number },
  ) {}

  async summarize({ event, snapshot, note }: SummaryInput, signal?: AbortSignal): Promise<string> {
    const facts = [describeDetections(event), frigateWords(note, event)].filter(Boolean).join(' ');
    const text = await this.client.complete(
      {
        messages: [
          {
            role: 'system',
            content:
              'You summarise one security camera event in two or three sentences for an operator: what is seen, ' +
              'where and when. Use only the image and the facts given; say when something cannot be told.',
          },
          {
            role: 'user',
            content: [
              { type: 'text', text: `Facts from the recorder: ${facts}` },
              ...(snapshot
                ? [
                    {
                      type: 'image_url' as const,
                      image_url: { url: `data:image/jpeg;base64,${snapshot.toString('base64')}` },
                    },
                  ]
                : []),
            ],
          },
        ],
        maxTokens: this.settings.maxTokens,
        temperature: this.settings.temperature,
      },
      signal,
    );
    return `Summary by ${this.client.model}: ${text.trim()}`;
  }
}
