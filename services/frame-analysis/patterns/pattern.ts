import type { SignalName } from './signals.js';

/** A range of a signal; either end may be open. */
export interface Zone {
  min?: number;
  max?: number;
}

/** A signal moving from one zone to another and staying there (see README, "transition"). */
export interface TransitionRule {
  kind: 'transition';
  signal: SignalName;
  /** Sided signals: `either` wrist may do it, or only `left` / `right`. */
  side: 'either' | 'left' | 'right';
  from: Zone;
  to: Zone;
  /** The change of the signal (between the two frames) that gives full confidence. */
  full_change: number;
  /** Frames in the `to` zone from the arrival on, at least. */
  min_hold_frames: number;
  /** Longest time from the `from` frame to the `to` frame, when the move must be quick. */
  max_duration_ms?: number;
  /** The hip centre must also drop between the two frames (in torso lengths): under `min` nothing, `full` or more: ×1. */
  hip_drop?: { min: number; full: number };
}

/** A signal held in a zone over the frames (see README, "sustained"). */
export interface SustainedRule {
  kind: 'sustained';
  signal: SignalName;
  /** Sided signals: `both` wrists, `either`, `left` or `right`. */
  side: 'both' | 'either' | 'left' | 'right';
  zone: Zone;
  /** Frames in the zone, at least. */
  min_frames: number;
}

/** Little movement over a long time (see README, "stillness"); needs the client's timestamps. */
export interface StillnessRule {
  kind: 'stillness';
  /** Largest distance of the hip centre from its mean position that still counts as standing still (torso lengths). */
  max_displacement: number;
  /** Time span of the frames that gives full confidence. */
  min_duration_ms: number;
}

/** A pattern's rule. */
export type PatternRule = TransitionRule | SustainedRule | StillnessRule;

/** One behaviour pattern of the library. */
export interface Pattern {
  id: string;
  description: string;
  enabled: boolean;
  /** Confidence from which the pattern is reported as `suspicious`. */
  threshold: number;
  /** Keypoints scored under this are not trusted (a signal that needs one is not measured in that frame). */
  min_keypoint_score: number;
  rule: PatternRule;
}
