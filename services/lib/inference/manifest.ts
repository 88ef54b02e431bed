import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Joi from 'joi';

/** The role a model plays; each role has one runtime class in this folder. */
export type ModelRole = 'image-embedder' | 'text-embedder' | 'detector' | 'pose-estimator' | 'multi-pose-estimator';

/**
 * How pixels become the model's input tensor. Pixels are RGB 0–255; `value = (pixel * scale - mean[c]) / std[c]`,
 * then cast to `dtype`. `resize`: `stretch` ignores the aspect ratio, `letterbox` pads to a square (top-left aligned),
 * `center-crop` scales the short side to fit and crops the middle (CLIP-style).
 */
export interface ImageInputSpec {
  name: string;
  width: number;
  height: number;
  resize: 'stretch' | 'letterbox' | 'center-crop';
  layout: 'NHWC' | 'NCHW';
  dtype: 'float32' | 'int32' | 'uint8';
  scale: number;
  mean: [number, number, number];
  std: [number, number, number];
  /** Largest batch the graph accepts (1 for fixed-batch graphs). */
  maxBatch: number;
}

/** A model directory's `manifest.json`: everything the runtime needs to use an ONNX file in a role. */
export interface ModelManifest {
  name: string;
  role: ModelRole;
  /** ONNX file, relative to the manifest's directory. */
  file: string;
  /** Where the weights came from (package@version/path) and their licence, for health and docs. */
  source?: string;
  license?: string;
  /** Image roles: input tensor spec. */
  image?: ImageInputSpec;
  /**
   * Text embedder: tokenizer kind and its vocabulary file (relative to the manifest directory). `clip-bpe` also reads
   * a merges file (`merges`, default `merges.txt`, Hugging Face format) and pads to `maxLength` (default 77).
   */
  tokenizer?: { kind: 'use-sentencepiece' | 'clip-bpe'; vocab: string; merges?: string; maxLength?: number };
  /** Output tensor names by meaning: `embedding`, `detections`, `keypoints`. */
  outputs: Record<string, string>;
  /**
   * Output layout. Embedders: `embedding` (normalised here when `normalize`). Detector: `xyxy-score-class`
   * ([1,N,6] in input pixels) or `yolov8` ([1,4+C,N], cx,cy,w,h). Pose: `movenet` ([1,1,17,3] y,x,score).
   * Multi-person pose: `movenet-multipose` ([1,P,56]: 17×(y,x,score), box ymin,xmin,ymax,xmax, score).
   */
  format: 'embedding' | 'xyxy-score-class' | 'yolov8' | 'movenet' | 'movenet-multipose';
  /** Embedders: vector size. */
  dimension?: number;
  /** Embedders: L2-normalise the output. */
  normalize?: boolean;
  /** Detector: class labels in output order. */
  labels?: string[];
}

const imageSpec = Joi.object({
  name: Joi.string().required(),
  width: Joi.number().integer().min(1).required(),
  height: Joi.number().integer().min(1).required(),
  resize: Joi.string().valid('stretch', 'letterbox', 'center-crop').required(),
  layout: Joi.string().valid('NHWC', 'NCHW').required(),
  dtype: Joi.string().valid('float32', 'int32', 'uint8').required(),
  scale: Joi.number().required(),
  mean: Joi.array().items(Joi.number()).length(3).required(),
  std: Joi.array().items(Joi.number()).length(3).required(),
  maxBatch: Joi.number().integer().min(1).required(),
});

/** Joi schema every manifest is validated against when loaded. */
export const manifestSchema = Joi.object({
  name: Joi.string().required(),
  role: Joi.string()
    .valid('image-embedder', 'text-embedder', 'detector', 'pose-estimator', 'multi-pose-estimator')
    .required(),
  file: Joi.string().required(),
  source: Joi.string(),
  license: Joi.string(),
  image: imageSpec.when('role', { is: Joi.valid('text-embedder'), then: Joi.forbidden(), otherwise: Joi.required() }),
  tokenizer: Joi.object({
    kind: Joi.string().valid('use-sentencepiece', 'clip-bpe').required(),
    vocab: Joi.string().required(),
    merges: Joi.string(),
    maxLength: Joi.number().integer().min(1),
  }).when('role', { is: 'text-embedder', then: Joi.required(), otherwise: Joi.forbidden() }),
  outputs: Joi.object().pattern(Joi.string(), Joi.string()).required(),
  format: Joi.string().valid('embedding', 'xyxy-score-class', 'yolov8', 'movenet', 'movenet-multipose').required(),
  dimension: Joi.number().integer().min(1),
  normalize: Joi.boolean(),
  labels: Joi.array().items(Joi.string()),
});

/** Reads and validates `<dir>/manifest.json`; the ONNX path is resolved inside `dir` only. */
export async function readManifest(dir: string): Promise<{ manifest: ModelManifest; modelPath: string }> {
  const raw = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8'));
  const { value, error } = manifestSchema.validate(raw, { abortEarly: false });
  if (error) throw new Error(`invalid model manifest in ${dir}: ${error.message}`);
  const manifest = value as ModelManifest;
  const modelPath = path.resolve(dir, manifest.file);
  if (!modelPath.startsWith(path.resolve(dir) + path.sep)) throw new Error(`model file escapes ${dir}`);
  return { manifest, modelPath };
}
