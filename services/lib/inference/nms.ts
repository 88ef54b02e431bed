import type { Detection } from './roles.js';

/** Intersection over union of two x1,y1,x2,y2 boxes (0 when either is empty). */
export function iou(a: Detection['box'], b: Detection['box']): number {
  const ix = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const iy = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = ix * iy;
  const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * Greedy non-maximum suppression within each class: keeps the highest-scoring box and drops same-class boxes that
 * overlap it by more than `iouThreshold`. Returns survivors sorted by descending score.
 */
export function perClassNms(detections: Detection[], iouThreshold = 0.5): Detection[] {
  const sorted = [...detections].sort((a, b) => b.score - a.score);
  const kept: Detection[] = [];
  for (const candidate of sorted) {
    const suppressed = kept.some((k) => k.classId === candidate.classId && iou(k.box, candidate.box) > iouThreshold);
    if (!suppressed) kept.push(candidate);
  }
  return kept;
}
