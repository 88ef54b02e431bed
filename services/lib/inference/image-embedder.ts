import type { ImageInputSpec } from './manifest.js';
import type { ImageEmbedder, ImageInputGeometry, ModelCallOptions, ModelInfo, RgbImage } from './roles.js';
import { InputBufferPool } from './image-tensor.js';
import { runImageModel } from './image-run.js';
import { l2Normalize } from './l2-normalize.js';
import { outputName, requireImageSpec, type LoadedModel } from './loaded-model.js';

/** Image embedder over any ONNX model whose manifest has role `image-embedder` and format `embedding`. */
export class OnnxImageEmbedder implements ImageEmbedder {
  readonly info: ModelInfo;
  readonly dimension: number;
  readonly input: ImageInputGeometry;
  private readonly spec: ImageInputSpec;
  private readonly output: string;
  private readonly inputs: InputBufferPool;

  constructor(private readonly model: LoadedModel) {
    const { manifest } = model;
    if (manifest.format !== 'embedding')
      throw new Error(`model ${manifest.name}: format ${manifest.format} is not an embedding`);
    if (!manifest.dimension) throw new Error(`model ${manifest.name}: embedding manifest needs "dimension"`);
    this.info = model.info;
    this.dimension = manifest.dimension;
    this.spec = requireImageSpec(manifest);
    this.input = { width: this.spec.width, height: this.spec.height, resize: this.spec.resize };
    this.inputs = new InputBufferPool(this.spec);
    this.output = outputName(model, 'embedding');
  }

  /** Embeds images in batches of the manifest's `maxBatch`; vectors are L2-normalised, in input order. */
  async embed(images: RgbImage[], options: ModelCallOptions = {}): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < images.length; start += this.spec.maxBatch) {
      vectors.push(...(await this.embedBatch(images.slice(start, start + this.spec.maxBatch), options)));
    }
    return vectors;
  }

  private async embedBatch(images: RgbImage[], options: ModelCallOptions): Promise<Float32Array[]> {
    const { output: result } = await runImageModel(
      this.model,
      this.spec,
      this.inputs,
      images,
      this.output,
      options.gate,
    );
    const data = result.data as Float32Array;
    const perImage = data.length / images.length;
    if (perImage !== this.dimension) {
      throw new Error(
        `model ${this.info.name}: output has ${perImage} values per image, manifest says ${this.dimension}`,
      );
    }
    return images.map((_, i) => l2Normalize(data, i * perImage, perImage));
  }
}
