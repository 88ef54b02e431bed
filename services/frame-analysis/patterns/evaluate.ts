import type { EntityFrame } from '../poses/track-entity.js';
import type { Pattern, StillnessRule, SustainedRule, TransitionRule, Zone } from './pattern.js';
import { measure, SIDED_SIGNALS, TrustedBody, type SignalName, type Side } from './signals.js';

/** How well a pattern fits the entity's frames: confidence 0–1 and why, in words. */
export interface PatternResult {
  pattern: Pattern;
  confidence: number;
  matched: boolean;
  reason: string;
}

/** What the evaluators see per frame: when it was taken and the entity's trusted keypoints (none: not found). */
interface Observation {
  index: number;
  timeMs: number;
  body?: TrustedBody;
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
const inZone = (value: number | undefined, zone: Zone) =>
  value !== undefined && (zone.min === undefined || value >= zone.min) && (zone.max === undefined || value <= zone.max);
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

function sidesOf(signal: SignalName, side: string): Array<Side | undefined> {
  if (!SIDED_SIGNALS.has(signal)) return [undefined];
  return side === 'left' || side === 'right' ? [side] : ['left', 'right'];
}

function label(signal: SignalName, side: Side | undefined): string {
  return side ? `${side} ${signal.replace('wrist_', 'wrist ')}` : signal.replace('_', ' ');
}

function hipY(body: TrustedBody): { y: number; torso: number } | undefined {
  const torso = body.torso();
  return torso && { y: torso.hips.y, torso: torso.length };
}

/**
 * transition: for frames i < j with the signal in `from` at i and in `to` at j (within `max_duration_ms` when set),
 * confidence = clamp01(|s_j − s_i| / full_change) × stay × drop, where stay is the share of measured frames from j on
 * that are in `to` (at least `min_hold_frames` of them must be) and drop = clamp01(hip drop / full) when `hip_drop` is
 * set (0 under its `min`), else 1. The best pair over the allowed sides is reported.
 */
function evaluateTransition(rule: TransitionRule, frames: Observation[]): { confidence: number; reason: string } {
  let best = { confidence: 0, reason: `no ${rule.signal.replace(/_/g, ' ')} transition between the required zones` };
  for (const side of sidesOf(rule.signal, rule.side)) {
    const values = frames.map((f) => (f.body ? measure(f.body, rule.signal, side) : undefined));
    for (let i = 0; i < frames.length; i++) {
      if (!inZone(values[i], rule.from)) continue;
      for (let j = i + 1; j < frames.length; j++) {
        if (!inZone(values[j], rule.to)) continue;
        if (rule.max_duration_ms !== undefined && frames[j].timeMs - frames[i].timeMs > rule.max_duration_ms) break;
        const measured = values.slice(j).filter((v) => v !== undefined);
        const held = measured.filter((v) => inZone(v, rule.to)).length;
        if (held < rule.min_hold_frames) continue;
        const amount = clamp01(Math.abs(values[j]! - values[i]!) / rule.full_change);
        const stay = held / measured.length;
        let drop = 1;
        let dropText = '';
        if (rule.hip_drop) {
          const a = hipY(frames[i].body!);
          const b = hipY(frames[j].body!);
          const dropped = a && b ? (b.y - a.y) / a.torso : 0;
          drop = dropped < rule.hip_drop.min ? 0 : clamp01(dropped / rule.hip_drop.full);
          dropText = `, hips dropped ${round(dropped)} torso lengths`;
        }
        const confidence = amount * stay * drop;
        if (confidence > best.confidence) {
          best = {
            confidence,
            reason:
              `${label(rule.signal, side)} went from ${round(values[i]!)} (frame ${frames[i].index}) to ` +
              `${round(values[j]!)} (frame ${frames[j].index}) and stayed in ${held} of ${measured.length} later ` +
              `frames${dropText}`,
          };
        }
      }
    }
  }
  return best;
}

/**
 * sustained: a frame counts when the signal is in `zone` (for `both`: on both sides; `either`: on one). confidence =
 * frames that count / frames where the entity was found, 0 when fewer than `min_frames` count.
 */
function evaluateSustained(rule: SustainedRule, frames: Observation[]): { confidence: number; reason: string } {
  const seen = frames.filter((f) => f.body);
  const sides = sidesOf(rule.signal, rule.side);
  const counts = seen.filter((f) => {
    const hits = sides.map((side) => inZone(measure(f.body!, rule.signal, side), rule.zone));
    return rule.side === 'both' ? hits.every(Boolean) : hits.some(Boolean);
  }).length;
  const what = `${rule.side === 'both' ? 'both sides' : rule.side}: ${rule.signal.replace(/_/g, ' ')}`;
  if (seen.length === 0 || counts < rule.min_frames) {
    return { confidence: 0, reason: `${what} in the zone in ${counts} of ${seen.length} frames` };
  }
  return { confidence: counts / seen.length, reason: `${what} in the zone in ${counts} of ${seen.length} frames` };
}

/**
 * stillness: over the frames where the hips are seen, span = last − first timestamp and displacement = largest
 * distance of the hip centre from its mean, in median torso lengths. confidence = clamp01(span / min_duration_ms) ×
 * clamp01(1 − displacement / max_displacement). Without client timestamps there is no span: confidence 0.
 */
function evaluateStillness(
  rule: StillnessRule,
  frames: Observation[],
  timestamped: boolean,
): { confidence: number; reason: string } {
  if (!timestamped) return { confidence: 0, reason: 'needs frame timestamps from the client' };
  const points = frames.flatMap((f) => {
    const torso = f.body?.torso();
    return torso ? [{ timeMs: f.timeMs, x: torso.hips.x, y: torso.hips.y, length: torso.length }] : [];
  });
  if (points.length < 2) return { confidence: 0, reason: 'the hips were seen in fewer than 2 frames' };
  const lengths = points.map((p) => p.length).sort((a, b) => a - b);
  const unit = lengths[Math.floor(lengths.length / 2)];
  const cx = points.reduce((s, p) => s + p.x, 0) / points.length;
  const cy = points.reduce((s, p) => s + p.y, 0) / points.length;
  const displacement = Math.max(...points.map((p) => Math.hypot(p.x - cx, p.y - cy))) / unit;
  const span = Math.max(...points.map((p) => p.timeMs)) - Math.min(...points.map((p) => p.timeMs));
  const confidence = clamp01(span / rule.min_duration_ms) * clamp01(1 - displacement / rule.max_displacement);
  return {
    confidence,
    reason: `moved at most ${round(displacement)} torso lengths over ${Math.round(span / 1000)} s`,
  };
}

/** Evaluates one pattern on the entity's frames; `timestamped` says whether the client sent frame times. */
export function evaluatePattern(pattern: Pattern, entity: EntityFrame[], timestamped: boolean): PatternResult {
  const frames: Observation[] = entity.map((f) => ({
    index: f.index,
    timeMs: f.timeMs,
    body: f.pose ? new TrustedBody(f.pose, pattern.min_keypoint_score) : undefined,
  }));
  const rule = pattern.rule;
  const { confidence, reason } =
    rule.kind === 'transition'
      ? evaluateTransition(rule, frames)
      : rule.kind === 'sustained'
        ? evaluateSustained(rule, frames)
        : evaluateStillness(rule, frames, timestamped);
  const rounded = round(confidence, 3);
  return { pattern, confidence: rounded, matched: rounded >= pattern.threshold, reason };
}

/**
 * Evaluates `patterns` (in library order) and returns the most confident; the first one wins a tie. Undefined when
 * the list is empty.
 */
export function mostConfident(
  patterns: Pattern[],
  entity: EntityFrame[],
  timestamped: boolean,
): PatternResult | undefined {
  let best: PatternResult | undefined;
  for (const pattern of patterns) {
    const result = evaluatePattern(pattern, entity, timestamped);
    if (!best || result.confidence > best.confidence) best = result;
  }
  return best;
}
