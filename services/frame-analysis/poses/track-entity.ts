import { iou, type Pose } from '../../lib/inference/index.js';

/** One analysed frame: when it was taken and every person found in it. */
export interface FramePoses {
  /** Position among the submitted frames. */
  index: number;
  timeMs: number;
  poses: Pose[];
}

/** The entity in one frame: its pose, or null when it was not found there. */
export interface EntityFrame {
  index: number;
  timeMs: number;
  pose: Pose | null;
}

function area([x1, y1, x2, y2]: Pose['box']): number {
  return Math.max(0, x2 - x1) * Math.max(0, y2 - y1);
}

function largest(poses: Pose[]): Pose {
  return poses.reduce((best, pose) => (area(pose.box) > area(best.box) ? pose : best));
}

/**
 * Follows one person across frames (in submission order): the largest person of the first frame with anyone in it,
 * then in each later frame the person whose box overlaps the entity's last box most (ties and no overlap at all:
 * the largest). A frame without people keeps the last box for the next frame.
 */
export function trackEntity(frames: FramePoses[]): EntityFrame[] {
  let last: Pose | undefined;
  return frames.map(({ index, timeMs, poses }) => {
    if (poses.length === 0) return { index, timeMs, pose: null };
    let chosen: Pose;
    if (!last) {
      chosen = largest(poses);
    } else {
      const previous = last.box;
      const overlaps = poses.map((pose) => iou(previous, pose.box));
      const best = Math.max(...overlaps);
      chosen = best > 0 ? largest(poses.filter((_, i) => overlaps[i] === best)) : largest(poses);
    }
    last = chosen;
    return { index, timeMs, pose: chosen };
  });
}
