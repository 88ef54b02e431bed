/** Execution provider of an onnxruntime session. */
export type ExecutionProvider = 'cpu' | 'cuda';

/** Decoded RGB image: `data` holds width*height*3 bytes, row-major, no padding. */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** What health reports about a loaded model. */
export interface ModelInfo {
  name: string;
  device: ExecutionProvider;
}

/** Embeds images into L2-normalised vectors. */
export interface ImageEmbedder {
  readonly info: ModelInfo;
  readonly dimension: number;
  embed(images: RgbImage[]): Promise<Float32Array[]>;
}

/** Embeds text into L2-normalised vectors. */
export interface TextEmbedder {
  readonly info: ModelInfo;
  readonly dimension: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** One detected object, box in pixels of the source image (x1,y1 top-left, x2,y2 bottom-right). */
export interface Detection {
  label: string;
  classId: number;
  score: number;
  box: [number, number, number, number];
}

/** COCO object detector with per-class NMS. */
export interface Detector {
  readonly info: ModelInfo;
  detect(image: RgbImage, minScore: number): Promise<Detection[]>;
}

/** One COCO keypoint in source-image pixels. */
export interface Keypoint {
  name: string;
  x: number;
  y: number;
  score: number;
}

/** Single-person pose estimator: 17 COCO keypoints. */
export interface PoseEstimator {
  readonly info: ModelInfo;
  estimate(image: RgbImage): Promise<Keypoint[]>;
}
