import type { Keypoint, Pose } from '../../lib/inference/index.js';

/** A body side, as COCO names it (the person's own left and right). */
export type Side = 'left' | 'right';

/** Per-frame measures the patterns are written in; each is documented with its formula in the README. */
export type SignalName = 'wrist_height' | 'wrist_reach' | 'wrist_above_nose' | 'torso_angle';

/** Signals measured per side (each wrist on its own). */
export const SIDED_SIGNALS: ReadonlySet<SignalName> = new Set(['wrist_height', 'wrist_reach', 'wrist_above_nose']);

/** Every signal name, for validation. */
export const SIGNAL_NAMES: readonly SignalName[] = ['wrist_height', 'wrist_reach', 'wrist_above_nose', 'torso_angle'];

type Point = { x: number; y: number };

/** A pose's keypoints that reach `minScore`, by name. */
export class TrustedBody {
  private readonly points = new Map<string, Keypoint>();

  constructor(pose: Pose, minScore: number) {
    for (const k of pose.keypoints) if (k.score >= minScore) this.points.set(k.name, k);
  }

  /** A trusted keypoint, or undefined. */
  point(name: string): Point | undefined {
    return this.points.get(name);
  }

  /** Midpoint of two trusted keypoints; undefined unless both are trusted. */
  mid(a: string, b: string): Point | undefined {
    const p = this.points.get(a);
    const q = this.points.get(b);
    return p && q ? { x: (p.x + q.x) / 2, y: (p.y + q.y) / 2 } : undefined;
  }

  /**
   * The torso: shoulder midpoint, hip midpoint and the distance between them (the unit every length is measured in,
   * so that measures do not depend on image size or distance to the camera). Needs both shoulders and both hips.
   */
  torso(): { shoulders: Point; hips: Point; length: number } | undefined {
    const shoulders = this.mid('left_shoulder', 'right_shoulder');
    const hips = this.mid('left_hip', 'right_hip');
    if (!shoulders || !hips) return undefined;
    const length = Math.hypot(hips.x - shoulders.x, hips.y - shoulders.y);
    return length > 0 ? { shoulders, hips, length } : undefined;
  }
}

/**
 * One signal of one body (and side); undefined when a keypoint it needs is not trusted. Image y grows downwards.
 * - wrist_height = (wrist.y − shoulders.y) / torso: 0 at shoulder height, 1 at hip height, negative above.
 * - wrist_reach = |wrist.x − shoulder.x| / torso (same side): how far the arm reaches out sideways.
 * - wrist_above_nose = (nose.y − wrist.y) / torso: positive when the wrist is above the nose.
 * - torso_angle = angle in degrees between hips→shoulders and straight up: 0 upright, 90 horizontal.
 */
export function measure(body: TrustedBody, signal: SignalName, side?: Side): number | undefined {
  const torso = body.torso();
  if (!torso) return undefined;
  if (signal === 'torso_angle') {
    const dx = torso.shoulders.x - torso.hips.x;
    const dy = torso.hips.y - torso.shoulders.y;
    return (Math.atan2(Math.abs(dx), dy) * 180) / Math.PI;
  }
  const wrist = body.point(`${side}_wrist`);
  if (!wrist) return undefined;
  if (signal === 'wrist_height') return (wrist.y - torso.shoulders.y) / torso.length;
  if (signal === 'wrist_reach') {
    const shoulder = body.point(`${side}_shoulder`);
    return shoulder ? Math.abs(wrist.x - shoulder.x) / torso.length : undefined;
  }
  const nose = body.point('nose');
  return nose ? (nose.y - wrist.y) / torso.length : undefined;
}
