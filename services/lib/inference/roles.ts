import type { ImageInputSpec } from './manifest.js';

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

/**
 * Runs one model run (the session call alone) when the caller allows it, e.g. through a semaphore shared by several
 * models; resolves with the run's result.
 */
export type RunGate = <T>(run: () => Promise<T>) => Promise<T>;

/** Per-call options of the image roles. */
export interface ModelCallOptions {
  /**
   * Wraps only the model run, not the preprocessing before it or the decoding after it, so a caller that allows one
   * model run at a time can still prepare the next input on its own thread while another model runs.
   */
  gate?: RunGate;
}

/** The part of an image model's input spec that says how big its input is and how images are fitted to it. */
export type ImageInputGeometry = Pick<ImageInputSpec, 'width' | 'height' | 'resize'>;

/** Embeds images into L2-normalised vectors. */
export interface ImageEmbedder {
  readonly info: ModelInfo;
  readonly dimension: number;
  /** The model's input geometry, when known (image descriptors resize to it). */
  readonly input?: ImageInputGeometry;
  embed(images: RgbImage[], options?: ModelCallOptions): Promise<Float32Array[]>;
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
  detect(image: RgbImage, minScore: number, options?: ModelCallOptions): Promise<Detection[]>;
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
