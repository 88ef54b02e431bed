import { beforeAll, describe, expect, it } from '@jest/globals';
import { SHIPPED_PATTERNS_FILE } from '../config.js';
import { trackEntity } from '../poses/track-entity.js';
import { poseOf, rotated, shifted, standing, withPoints, type Skeleton } from '../testing/stick-figure.js';
import { evaluatePattern, mostConfident } from './evaluate.js';
import type { Pattern } from './pattern.js';
import { loadPatternLibrary } from './pattern-library.js';

/**
 * Every shipped pattern against stick-figure sequences whose keypoints are known exactly (the same skeletons the
 * SVG fixtures are drawn from): one sequence that must match, and ones that must not.
 */
let patterns: Pattern[];
const byId = (id: string) => patterns.find((p) => p.id === id)!;

/** Frames of one figure at the given times (33 ms apart by default). */
function entity(skeletons: Skeleton[], times?: number[]) {
  return trackEntity(skeletons.map((s, i) => ({ index: i, timeMs: times?.[i] ?? i * 33, poses: [poseOf(s)] })));
}

const base = standing(320, 460, 400); // torso 130 px, shoulders at y 130, hips at y 260
const [rsx, rsy] = base.right_shoulder;
const shelf = withPoints(base, { right_elbow: [rsx - 30, rsy - 20], right_wrist: [rsx - 20, rsy - 70] });
const pocket = withPoints(base, { right_elbow: [rsx - 10, rsy + 70], right_wrist: [rsx + 20, rsy + 130] });
const reaching = withPoints(base, { right_elbow: [rsx - 80, rsy + 5], right_wrist: [rsx - 170, rsy + 10] });
const armsUp = withPoints(base, {
  left_elbow: [base.left_shoulder[0] + 10, rsy - 70],
  left_wrist: [base.left_shoulder[0] + 15, rsy - 150],
  right_elbow: [rsx - 10, rsy - 70],
  right_wrist: [rsx - 15, rsy - 150],
});
const oneArmUp = withPoints(base, { right_elbow: [rsx - 10, rsy - 70], right_wrist: [rsx - 15, rsy - 150] });
const fallen = shifted(rotated(base, 85, [320, 460]), 0, 0);

beforeAll(async () => {
  patterns = await loadPatternLibrary(SHIPPED_PATTERNS_FILE);
});

describe('the shipped pattern library', () => {
  it('has the five documented patterns, all enabled', () => {
    expect(patterns.map((p) => p.id)).toEqual([
      'shelf_to_waist',
      'quick_grab',
      'fall_detection',
      'loitering',
      'raised_arms',
    ]);
    expect(patterns.every((p) => p.enabled)).toBe(true);
  });
});

describe('shelf_to_waist', () => {
  it('matches a wrist that goes from the shelf to the pocket and stays there', () => {
    const result = evaluatePattern(byId('shelf_to_waist'), entity([shelf, pocket, pocket]), false);
    expect(result.matched).toBe(true);
    expect(result.confidence).toBe(1);
    expect(result.reason).toMatch(/right wrist height went from -0\.54 \(frame 0\) to 1 \(frame 1\)/);
  });

  it('does not match a wrist that goes back up, or one that never left the waist', () => {
    expect(evaluatePattern(byId('shelf_to_waist'), entity([shelf, pocket, shelf]), false).matched).toBe(false);
    expect(evaluatePattern(byId('shelf_to_waist'), entity([base, pocket, pocket]), false).confidence).toBe(0);
  });

  it('does not trust keypoints under its minimum score', () => {
    const doubtful = entity([shelf, pocket, pocket]).map((f) => ({
      ...f,
      pose: { ...f.pose!, keypoints: f.pose!.keypoints.map((k) => ({ ...k, score: 0.2 })) },
    }));
    expect(evaluatePattern(byId('shelf_to_waist'), doubtful, false).confidence).toBe(0);
  });
});

describe('quick_grab', () => {
  it('matches a hand that reaches out and is back at the body within half a second', () => {
    const result = evaluatePattern(byId('quick_grab'), entity([base, reaching, base]), false);
    expect(result.matched).toBe(true);
    expect(result.confidence).toBe(1);
  });

  it('does not match the same movement spread over four seconds', () => {
    const slow = evaluatePattern(byId('quick_grab'), entity([base, reaching, base], [0, 2000, 4000]), true);
    expect(slow.confidence).toBe(0);
  });
});

describe('fall_detection', () => {
  it('matches a torso going from upright to horizontal with the hips dropping', () => {
    const result = evaluatePattern(byId('fall_detection'), entity([base, base, fallen]), false);
    expect(result.matched).toBe(true);
    expect(result.reason).toMatch(/hips dropped/);
  });

  it('does not match someone walking upright, nor someone lying still the whole time', () => {
    const walking = entity([base, shifted(base, 40, 0), shifted(base, 80, 0)]);
    expect(evaluatePattern(byId('fall_detection'), walking, false).confidence).toBe(0);
    expect(evaluatePattern(byId('fall_detection'), entity([fallen, fallen, fallen]), false).confidence).toBe(0);
  });

  it('does not match a torso tipping over in place without a hip drop (a bow)', () => {
    const hips: [number, number] = [(base.left_hip[0] + base.right_hip[0]) / 2, base.left_hip[1]];
    const upper = rotated(base, 85, hips);
    const bow = withPoints(upper, {
      left_hip: base.left_hip,
      right_hip: base.right_hip,
      left_knee: base.left_knee,
      right_knee: base.right_knee,
      left_ankle: base.left_ankle,
      right_ankle: base.right_ankle,
    });
    expect(evaluatePattern(byId('fall_detection'), entity([base, bow]), false).confidence).toBe(0);
  });
});

describe('loitering', () => {
  const jitter = [base, shifted(base, 10, 0), shifted(base, -8, 3), shifted(base, 5, -2)];

  it('matches little displacement over 45 s of client timestamps', () => {
    const result = evaluatePattern(byId('loitering'), entity(jitter, [0, 15_000, 30_000, 45_000]), true);
    expect(result.matched).toBe(true);
    expect(result.reason).toMatch(/over 45 s/);
  });

  it('does not match without timestamps, over a short span, or when the person walks away', () => {
    expect(evaluatePattern(byId('loitering'), entity(jitter), false)).toMatchObject({
      confidence: 0,
      reason: 'needs frame timestamps from the client',
    });
    expect(evaluatePattern(byId('loitering'), entity(jitter, [0, 1000, 2000, 3000]), true).matched).toBe(false);
    const walking = [base, shifted(base, 150, 0), shifted(base, 300, 0)];
    expect(evaluatePattern(byId('loitering'), entity(walking, [0, 20_000, 40_000]), true).confidence).toBe(0);
  });
});

describe('raised_arms', () => {
  it('matches both wrists held above the nose', () => {
    expect(evaluatePattern(byId('raised_arms'), entity([armsUp, armsUp, armsUp]), false)).toMatchObject({
      matched: true,
      confidence: 1,
    });
  });

  it('does not match one raised arm, or arms raised in a single frame', () => {
    expect(evaluatePattern(byId('raised_arms'), entity([oneArmUp, oneArmUp, oneArmUp]), false).confidence).toBe(0);
    expect(evaluatePattern(byId('raised_arms'), entity([base, armsUp, base]), false).confidence).toBe(0);
  });
});

describe('choosing among patterns', () => {
  it('reports the most confident pattern when none is named', () => {
    expect(mostConfident(patterns, entity([base, base, fallen]), false)?.pattern.id).toBe('fall_detection');
    expect(mostConfident(patterns, entity([shelf, pocket, pocket]), false)?.pattern.id).toBe('shelf_to_waist');
  });

  it('keeps library order on a tie (nothing matched: the first pattern)', () => {
    expect(mostConfident(patterns, entity([base, base]), false)).toMatchObject({
      confidence: 0,
      pattern: { id: 'shelf_to_waist' },
    });
  });
});
