import type { ImageInputSpec } from './manifest.js';
import type { Detection, Detector, ModelCallOptions, ModelInfo, RgbImage } from './roles.js';
import { InputBufferPool } from './image-tensor.js';
import { runImageModel } from './image-run.js';
import { decodeXyxyScoreClass, decodeYolov8 } from './detection-decode.js';
import { outputName, requireImageSpec, type LoadedModel } from './loaded-model.js';
import { perClassNms } from './nms.js';

/** IoU above which a lower-scoring box of the same class is dropped. */
export const NMS_IOU_THRESHOLD = 0.5;

/** Object detector for `xyxy-score-class` (CenterNet export) and `yolov8` outputs, with per-class NMS. */
export class OnnxDetector implements Detector {
  readonly info: ModelInfo;
  private readonly spec: ImageInputSpec;
  private readonly output: string;
  private readonly inputs: InputBufferPool;
  private readonly labels: string[];

  constructor(private readonly model: LoadedModel) {
    const { manifest } = model;
    if (manifest.format !== 'xyxy-score-class' && manifest.format !== 'yolov8') {
      throw new Error(`model ${manifest.name}: format ${manifest.format} is not a detector output`);
    }
    this.info = model.info;
    this.spec = requireImageSpec(manifest);
    this.inputs = new InputBufferPool(this.spec);
    this.output = outputName(model, 'detections');
    this.labels = manifest.labels ?? [];
  }

  /** Detects objects; boxes are in source pixels, clamped to the image, NMS'd per class, best first. */
  async detect(image: RgbImage, minScore: number, options: ModelCallOptions = {}): Promise<Detection[]> {
    const { output: result, placements } = await runImageModel(
      this.model,
      this.spec,
      this.inputs,
      [image],
      this.output,
      options.gate,
    );
    const placement = placements[0];
    const ctx = { placement, sourceWidth: image.width, sourceHeight: image.height, labels: this.labels, minScore };
    const data = result.data as Float32Array;
    const raw =
      this.model.manifest.format === 'yolov8' ? decodeYolov8(data, result.dims, ctx) : decodeXyxyScoreClass(data, ctx);
    return perClassNms(raw, NMS_IOU_THRESHOLD);
  }
}
