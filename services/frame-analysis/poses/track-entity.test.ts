import { describe, expect, it } from '@jest/globals';
import { poseOf, shifted, standing } from '../testing/stick-figure.js';
import { trackEntity } from './track-entity.js';

const small = standing(100, 400, 200);
const big = standing(400, 460, 400);

describe('trackEntity', () => {
  it('starts with the largest person and follows the one that overlaps it most, even when another grows larger', () => {
    const grown = standing(100, 460, 420); // the other person walks closer and becomes the largest
    const frames = [
      { index: 0, timeMs: 0, poses: [poseOf(small), poseOf(big)] },
      { index: 1, timeMs: 33, poses: [poseOf(grown), poseOf(shifted(big, 20, 0))] },
    ];
    const [first, second] = trackEntity(frames);
    expect(first.pose!.box).toEqual(poseOf(big).box);
    expect(second.pose!.box).toEqual(poseOf(shifted(big, 20, 0)).box);
  });

  it('keeps the last box across a frame without people, and takes the largest when nothing overlaps', () => {
    const far = standing(600, 460, 100);
    const frames = [
      { index: 0, timeMs: 0, poses: [poseOf(small)] },
      { index: 1, timeMs: 33, poses: [] },
      { index: 2, timeMs: 66, poses: [poseOf(shifted(small, 10, 0)), poseOf(big)] },
      { index: 3, timeMs: 99, poses: [poseOf(far), poseOf(standing(700, 460, 150))] },
    ];
    const track = trackEntity(frames);
    expect(track[1].pose).toBeNull();
    expect(track[2].pose!.box).toEqual(poseOf(shifted(small, 10, 0)).box);
    expect(track[3].pose!.box).toEqual(poseOf(standing(700, 460, 150)).box);
  });
});
