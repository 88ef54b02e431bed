import type { Detection } from '../inference/index.js';
import { countedName, pluralOf } from './object-words.js';

/** Where an object sits across the frame: by its box centre, in thirds. */
export type HorizontalPosition = 'left' | 'centre' | 'right';

/** How much of the frame an object's box covers. */
export type ObjectSize = 'small' | 'medium' | 'large';

/** What a frame's description says, and the filterable facts beside it. */
export interface FrameDescription {
  /** "two people and a bus; the bus in the centre, large; people on the left and right". */
  text: string;
  /** Distinct classes, most frequent first. */
  labels: string[];
  /** `<label>@<position>` for every position a class occupies ("bus@centre"), for position-aware ranking. */
  positions: string[];
}

/** Only detections at least this confident go into a description (the detector's scores, 0–1). */
export const DESCRIPTION_MIN_SCORE = 0.4;

/** The horizontal third a box's centre falls in. */
export function horizontalPosition(box: Detection['box'], width: number): HorizontalPosition {
  const centre = (box[0] + box[2]) / 2 / Math.max(1, width);
  return centre < 1 / 3 ? 'left' : centre > 2 / 3 ? 'right' : 'centre';
}

/** small under 3% of the frame, large over 25%. */
export function objectSize(box: Detection['box'], width: number, height: number): ObjectSize {
  const area = ((box[2] - box[0]) * (box[3] - box[1])) / Math.max(1, width * height);
  return area < 0.03 ? 'small' : area > 0.25 ? 'large' : 'medium';
}

const placeWords = (position: HorizontalPosition) => (position === 'centre' ? 'in the centre' : `on the ${position}`);

/** "a bus on the left, large": one detected object in words (object hits are described this way). */
export function describeObject(detection: Detection, width: number, height: number): string {
  const where = placeWords(horizontalPosition(detection.box, width));
  return `${countedName(detection.label, 1)} ${where}, ${objectSize(detection.box, width, height)}`;
}

const joinWords = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * A short text of what the detector found in a frame (`width`×`height` px): counts per class, then where each class
 * is and, for a single object, how large. Only detections scoring at least `minScore` count; undefined when none does.
 */
export function describeFrame(
  detections: Detection[],
  width: number,
  height: number,
  minScore = DESCRIPTION_MIN_SCORE,
): FrameDescription | undefined {
  const found = detections.filter((d) => d.score >= minScore);
  if (found.length === 0) return undefined;
  const byLabel = new Map<string, Detection[]>();
  for (const detection of found) byLabel.set(detection.label, [...(byLabel.get(detection.label) ?? []), detection]);
  const classes = [...byLabel.entries()].sort((a, b) => b[1].length - a[1].length || b[1][0].score - a[1][0].score);
  const counts = joinWords(classes.map(([label, items]) => countedName(label, items.length)));
  const places: string[] = [];
  const positions: string[] = [];
  for (const [label, items] of classes) {
    const where = [...new Set(items.map((d) => horizontalPosition(d.box, width)))];
    positions.push(...where.map((position) => `${label}@${position}`));
    if (items.length === 1) {
      const size = objectSize(items[0].box, width, height);
      places.push(`the ${label} ${placeWords(where[0])}, ${size}`);
    } else {
      places.push(`${pluralOf(label)} ${joinWords(where.map(placeWords))}`);
    }
  }
  return { text: `${counts}; ${places.join('; ')}`, labels: classes.map(([label]) => label), positions };
}
