import * as ort from 'onnxruntime-node';
import type { ImageInputSpec } from './manifest.js';
import type { Detection, Detector, ModelInfo, RgbImage } from './roles.js';
import { allocateInput, prepareImage } from './image-tensor.js';
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
  private readonly labels: string[];

  constructor(private readonly model: LoadedModel) {
    const { manifest } = model;
    if (manifest.format !== 'xyxy-score-class' && manifest.format !== 'yolov8') {
      throw new Error(`model ${manifest.name}: format ${manifest.format} is not a detector output`);
    }
    this.info = model.info;
    this.spec = requireImageSpec(manifest);
    this.output = outputName(model, 'detections');
    this.labels = manifest.labels ?? [];
  }

  /** Detects objects; boxes are in source pixels, clamped to the image, NMS'd per class, best first. */
  async detect(image: RgbImage, minScore: number): Promise<Detection[]> {
    const { spec } = this;
    const input = allocateInput(spec, 1);
    const placement = await prepareImage(image, spec, input, 0);
    const dims = spec.layout === 'NHWC' ? [1, spec.height, spec.width, 3] : [1, 3, spec.height, spec.width];
    const result = (
      await this.model.session.run({ [spec.name]: new ort.Tensor(spec.dtype, input, dims) }, [this.output])
    )[this.output];
    const ctx = { placement, sourceWidth: image.width, sourceHeight: image.height, labels: this.labels, minScore };
    const data = result.data as Float32Array;
    const raw =
      this.model.manifest.format === 'yolov8' ? decodeYolov8(data, result.dims, ctx) : decodeXyxyScoreClass(data, ctx);
    return perClassNms(raw, NMS_IOU_THRESHOLD);
  }
}
