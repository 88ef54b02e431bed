/** Public surface of the inference runtime: role interfaces, manifests, ONNX role classes and the model registry. */
export type {
  Detection,
  Detector,
  ExecutionProvider,
  ImageEmbedder,
  Keypoint,
  ModelCallOptions,
  ModelInfo,
  PoseEstimator,
  RgbImage,
  RunGate,
  TextEmbedder,
} from './roles.js';
export { manifestSchema, readManifest } from './manifest.js';
export type { ImageInputSpec, ModelManifest, ModelRole } from './manifest.js';
export { createSession, ExecutionProviderUnavailableError } from './session.js';
export type { CreatedSession, SessionOptions } from './session.js';
export type { ModelSession } from './worker-session.js';
export {
  DEFAULT_MODEL_NAMES,
  loadModels,
  MODEL_SLOTS,
  ModelRoleMismatchError,
  resolveModelDir,
} from './model-registry.js';
export type { LoadedModels, ModelSlot, ModelsConfig, ModelStatus, RoleImplementations } from './model-registry.js';
export type { LoadedModel } from './loaded-model.js';
export { OnnxImageEmbedder } from './image-embedder.js';
export { CURRENT_IMAGE_DESCRIPTOR, IMAGE_DESCRIPTORS, imageDescriptor } from './image-descriptor.js';
export type { ImageDescriptor, ImageDescriptorName } from './image-descriptor.js';
export { OnnxTextEmbedder, UnsupportedTokenizerError } from './text-embedder.js';
export type { TokenizerFiles } from './text-embedder.js';
export { OnnxDetector, NMS_IOU_THRESHOLD } from './detector.js';
export { OnnxPoseEstimator, decodeMovenet } from './pose-estimator.js';
export { OnnxMultiPoseEstimator, decodeMovenetMultipose, loadMultiPoseEstimator } from './multi-pose-estimator.js';
export type {
  LoadedMultiPoseEstimator,
  MultiPoseEstimator,
  MultiPoseModelConfig,
  Pose,
} from './multi-pose-estimator.js';
export { COCO_KEYPOINT_NAMES } from './coco-keypoints.js';
export { cropDetection } from './crop.js';
export { iou, perClassNms } from './nms.js';
export { decodeXyxyScoreClass, decodeYolov8 } from './detection-decode.js';
export { placeImage, toSourcePoint } from './image-tensor.js';
export type { InputPlacement } from './image-tensor.js';
export { cosine, l2Normalize } from './l2-normalize.js';
export { UseSentencePieceTokenizer } from './use-sentencepiece-tokenizer.js';
export { ClipBpeTokenizer } from './clip-bpe-tokenizer.js';
// The TFJS→ONNX importer (./import/) adds its exports below.
