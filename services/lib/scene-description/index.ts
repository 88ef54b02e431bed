/**
 * Public surface of scene descriptions: what a detector found in a frame, in words (dataprep's frame descriptions,
 * caption-runs' offline captions), what changed between two frames, and the words of object classes.
 */
export {
  describeFrame,
  describeObject,
  DESCRIPTION_MIN_SCORE,
  horizontalPosition,
  objectSize,
} from './frame-description.js';
export type { FrameDescription, HorizontalPosition, ObjectSize } from './frame-description.js';
export { COCO_LABELS, countedName, labelsNamed, pluralOf } from './object-words.js';
export { classCounts, describeChange } from './scene-change.js';
export { OFFLINE_CAPTION_LABEL, offlineCaption } from './offline-caption.js';
