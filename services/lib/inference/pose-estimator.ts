import type { ImageInputSpec } from './manifest.js';
import type { Keypoint, ModelInfo, PoseEstimator, RgbImage } from './roles.js';
import { COCO_KEYPOINT_NAMES } from './coco-keypoints.js';
import { InputBufferPool, toSourcePoint, type InputPlacement } from './image-tensor.js';
import { runImageModel } from './image-run.js';
import { outputName, requireImageSpec, type LoadedModel } from './loaded-model.js';

/**
 * Decodes MoveNet output `[1,1,17,3]` (y, x, score normalised to the model input square, padding included) into
 * keypoints in source pixels, clamped to the image.
 */
export function decodeMovenet(
  data: ArrayLike<number>,
  spec: Pick<ImageInputSpec, 'width' | 'height'>,
  placement: InputPlacement,
  sourceWidth: number,
  sourceHeight: number,
): Keypoint[] {
  if (data.length < COCO_KEYPOINT_NAMES.length * 3)
    throw new Error(`movenet output has ${data.length} values, need 51`);
  return COCO_KEYPOINT_NAMES.map((name, i) => {
    const [x, y] = toSourcePoint(data[i * 3 + 1] * spec.width, data[i * 3] * spec.height, placement);
    return {
      name,
      x: Math.min(sourceWidth, Math.max(0, x)),
      y: Math.min(sourceHeight, Math.max(0, y)),
      score: data[i * 3 + 2],
    };
  });
}

/** Single-person pose estimator for MoveNet-format models. */
export class OnnxPoseEstimator implements PoseEstimator {
  readonly info: ModelInfo;
  private readonly spec: ImageInputSpec;
  private readonly output: string;
  private readonly inputs: InputBufferPool;

  constructor(private readonly model: LoadedModel) {
    const { manifest } = model;
    if (manifest.format !== 'movenet')
      throw new Error(`model ${manifest.name}: format ${manifest.format} is not a pose output`);
    this.info = model.info;
    this.spec = requireImageSpec(manifest);
    this.inputs = new InputBufferPool(this.spec);
    this.output = outputName(model, 'keypoints');
  }

  /** Estimates the 17 COCO keypoints of the main person, in source pixels, with their scores. */
  async estimate(image: RgbImage): Promise<Keypoint[]> {
    const { output: result, placements } = await runImageModel(
      this.model,
      this.spec,
      this.inputs,
      [image],
      this.output,
    );
    return decodeMovenet(result.data as Float32Array, this.spec, placements[0], image.width, image.height);
  }
}
