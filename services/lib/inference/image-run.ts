import * as ort from 'onnxruntime-node';
import type { ImageInputSpec } from './manifest.js';
import type { RgbImage, RunGate } from './roles.js';
import { prepareImage, type InputBufferPool, type InputPlacement } from './image-tensor.js';
import type { LoadedModel } from './loaded-model.js';

/** One session run's output tensor and where each image landed in the input. */
export interface ImageRunResult {
  output: ort.Tensor;
  placements: InputPlacement[];
}

/**
 * Preprocesses `images` into one pooled batch input, runs the session (through `gate` when given: only the run, not
 * the preprocessing) and returns the named output.
 */
export async function runImageModel(
  model: LoadedModel,
  spec: ImageInputSpec,
  pool: InputBufferPool,
  images: RgbImage[],
  outputName: string,
  gate?: RunGate,
): Promise<ImageRunResult> {
  const input = pool.acquire(images.length);
  try {
    const placements = await Promise.all(images.map((image, i) => prepareImage(image, spec, input, i)));
    const n = images.length;
    const dims = spec.layout === 'NHWC' ? [n, spec.height, spec.width, 3] : [n, 3, spec.height, spec.width];
    const run = () => model.session.run({ [spec.name]: new ort.Tensor(spec.dtype, input, dims) }, [outputName]);
    const outputs = await (gate ? gate(run) : run());
    return { output: outputs[outputName], placements };
  } finally {
    pool.release(input);
  }
}
