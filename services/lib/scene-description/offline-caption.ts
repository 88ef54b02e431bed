import type { Detection } from '../inference/index.js';
import { describeFrame, DESCRIPTION_MIN_SCORE } from './frame-description.js';
import { describeChange } from './scene-change.js';

/** How an offline caption begins: it says what it is, so nobody takes it for a model's sentence. */
export const OFFLINE_CAPTION_LABEL = 'Offline caption (from detections, no VLM):';

/**
 * A caption built from what the detector saw in a `width`×`height` frame, labelled as such: counts, labels and
 * positions (as `describeFrame`), then what changed since `previous` (the last captioned frame's detections, when
 * there was one). "Offline caption (from detections, no VLM): a car; the car on the left, medium. Since the last
 * chunk: a car appeared." Detections under `minScore` are left out.
 */
export function offlineCaption(
  detections: Detection[],
  width: number,
  height: number,
  previous?: Detection[],
  minScore = DESCRIPTION_MIN_SCORE,
): string {
  const scene = describeFrame(detections, width, height, minScore)?.text ?? 'nothing detected';
  const change = previous ? describeChange(previous, detections, minScore) : undefined;
  return `${OFFLINE_CAPTION_LABEL} ${scene}.${change ? ` Since the last chunk: ${change}.` : ''}`;
}
