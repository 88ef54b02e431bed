import path from 'node:path';
import type { ImageInputSpec, ModelManifest } from './manifest.js';
import { readManifest } from './manifest.js';
import type { Keypoint, ModelInfo, RgbImage, RunGate } from './roles.js';
import { COCO_KEYPOINT_NAMES } from './coco-keypoints.js';
import { InputBufferPool, toSourcePoint, type InputPlacement } from './image-tensor.js';
import { runImageModel } from './image-run.js';
import { outputName, requireImageSpec, type LoadedModel } from './loaded-model.js';
import { resolveModelDir } from './model-registry.js';
import { createSession, type SessionOptions } from './session.js';

/** One person found in an image: 17 COCO keypoints, a box (x1,y1,x2,y2) in source pixels and the person's score. */
export interface Pose {
  keypoints: Keypoint[];
  box: [number, number, number, number];
  score: number;
}

/** Multi-person pose estimator: every person in the image, most confident first. */
export interface MultiPoseEstimator {
  readonly info: ModelInfo;
  estimate(image: RgbImage, minScore: number, options?: { gate?: RunGate }): Promise<Pose[]>;
}

/** Values per person in MoveNet MultiPose output: 17×(y,x,score), then ymin,xmin,ymax,xmax, score. */
const MULTIPOSE_STRIDE = COCO_KEYPOINT_NAMES.length * 3 + 5;

/**
 * Decodes MoveNet MultiPose output `[1,P,56]` (coordinates normalised to the model input square, padding included)
 * into poses in source pixels, clamped to the image; people under `minScore` are dropped, the rest sorted by score.
 */
export function decodeMovenetMultipose(
  data: ArrayLike<number>,
  spec: Pick<ImageInputSpec, 'width' | 'height'>,
  placement: InputPlacement,
  sourceWidth: number,
  sourceHeight: number,
  minScore: number,
): Pose[] {
  if (data.length % MULTIPOSE_STRIDE !== 0) {
    throw new Error(`movenet multipose output has ${data.length} values, not a multiple of ${MULTIPOSE_STRIDE}`);
  }
  const point = (y: number, x: number): [number, number] => {
    const [sx, sy] = toSourcePoint(x * spec.width, y * spec.height, placement);
    return [Math.min(sourceWidth, Math.max(0, sx)), Math.min(sourceHeight, Math.max(0, sy))];
  };
  const poses: Pose[] = [];
  for (let offset = 0; offset < data.length; offset += MULTIPOSE_STRIDE) {
    const score = data[offset + MULTIPOSE_STRIDE - 1];
    if (!(score >= minScore)) continue;
    const keypoints = COCO_KEYPOINT_NAMES.map((name, k) => {
      const [x, y] = point(data[offset + k * 3], data[offset + k * 3 + 1]);
      return { name, x, y, score: data[offset + k * 3 + 2] };
    });
    const boxAt = offset + COCO_KEYPOINT_NAMES.length * 3;
    const [x1, y1] = point(data[boxAt], data[boxAt + 1]);
    const [x2, y2] = point(data[boxAt + 2], data[boxAt + 3]);
    poses.push({ keypoints, box: [x1, y1, x2, y2], score });
  }
  return poses.sort((a, b) => b.score - a.score);
}

/** Multi-person pose estimator for MoveNet MultiPose-format models. */
export class OnnxMultiPoseEstimator implements MultiPoseEstimator {
  readonly info: ModelInfo;
  private readonly spec: ImageInputSpec;
  private readonly output: string;
  private readonly inputs: InputBufferPool;

  constructor(private readonly model: LoadedModel) {
    const { manifest } = model;
    if (manifest.format !== 'movenet-multipose') {
      throw new Error(`model ${manifest.name}: format ${manifest.format} is not a multi-person pose output`);
    }
    this.info = model.info;
    this.spec = requireImageSpec(manifest);
    this.inputs = new InputBufferPool(this.spec);
    this.output = outputName(model, 'poses');
  }

  /** Every person scored at least `minScore`, most confident first. */
  async estimate(image: RgbImage, minScore: number, options?: { gate?: RunGate }): Promise<Pose[]> {
    const { output, placements } = await runImageModel(
      this.model,
      this.spec,
      this.inputs,
      [image],
      this.output,
      options?.gate,
    );
    const data = output.data as Float32Array;
    return decodeMovenetMultipose(data, this.spec, placements[0], image.width, image.height, minScore);
  }
}

/** Where the multi-person pose model lives and how its session runs. */
export interface MultiPoseModelConfig extends SessionOptions {
  modelsDir: string;
  /** A directory name under `modelsDir` or an absolute directory with a manifest. */
  model: string;
}

/** A multi-person pose role whose session is created on first use; health reads `status()`. */
export interface LoadedMultiPoseEstimator extends MultiPoseEstimator {
  readonly manifest: ModelManifest;
  /** Whether the session exists yet. */
  readonly loaded: boolean;
  /** Creates the session now, so the first request is not slow. */
  warmUp(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Reads and validates the model's manifest now (its role must be `multi-pose-estimator`) and creates the session on
 * first use; a failed session creation is retried by the next call.
 */
export async function loadMultiPoseEstimator(config: MultiPoseModelConfig): Promise<LoadedMultiPoseEstimator> {
  const dir = resolveModelDir(config.modelsDir, config.model);
  const { manifest, modelPath } = await readManifest(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new Error(`no model manifest at ${path.join(dir, 'manifest.json')}`);
    throw error;
  });
  if (manifest.role !== 'multi-pose-estimator') {
    throw new Error(`model "${manifest.name}" in ${dir} has role ${manifest.role}, not multi-pose-estimator`);
  }
  let pending: Promise<OnnxMultiPoseEstimator> | undefined;
  let loaded: { model: LoadedModel; instance: OnnxMultiPoseEstimator } | undefined;
  const get = () =>
    (pending ??= (async () => {
      const { session, provider } = await createSession(modelPath, config);
      try {
        const model: LoadedModel = { manifest, session, info: { name: manifest.name, device: provider } };
        const instance = new OnnxMultiPoseEstimator(model);
        loaded = { model, instance };
        return instance;
      } catch (error) {
        await session.release();
        throw error;
      }
    })().catch((error) => {
      pending = undefined;
      throw error;
    }));
  return {
    manifest,
    get info() {
      return loaded?.model.info ?? { name: manifest.name, device: config.provider };
    },
    get loaded() {
      return loaded !== undefined;
    },
    estimate: async (image, minScore, options) => (await get()).estimate(image, minScore, options),
    warmUp: async () => {
      await get();
    },
    release: async () => {
      const current = loaded;
      loaded = undefined;
      pending = undefined;
      await current?.model.session.release();
    },
  };
}
