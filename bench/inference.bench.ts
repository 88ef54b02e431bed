/**
 * Inference runtime throughput per role at batch 1 and 8, and the cost of everything around the model:
 * end-to-end time (decode + preprocess + run + postprocess) divided by bare `session.run` time on a prepared
 * tensor, both measured on the same session, interleaved, in the same run.
 */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { decodeImage } from '../services/lib/media/image-decode.js';
import {
  createSession,
  DEFAULT_MODEL_NAMES,
  OnnxDetector,
  OnnxImageEmbedder,
  OnnxPoseEstimator,
  OnnxTextEmbedder,
  readManifest,
  type LoadedModel,
  type RgbImage,
} from '../services/lib/inference/index.js';
import { allocateInput, pixelLookup, prepareImage } from '../services/lib/inference/image-tensor.js';
import {
  UseSentencePieceTokenizer,
  type VocabularyEntry,
} from '../services/lib/inference/use-sentencepiece-tokenizer.js';
import { ensureDefaultModels } from '../test/support/models.js';

const FIXTURES = [path.resolve('test/fixtures/images'), '/work/shared/fixtures/images'].find((dir) => existsSync(dir))!;
const PHOTOS = [
  'pexels_double_decker_bus.jpg',
  'astronaut.png',
  'chelsea.png',
  'coffee.png',
  'motorcycle_left.png',
  'person_multi_det.jpg',
  'rocket.jpg',
];
const SENTENCES = [
  'a double decker bus on the street',
  'an astronaut in a white space suit holding a helmet',
  'a cat lying on a red blanket',
  'a cup of coffee on a saucer',
  'a motorcycle parked in a garage',
  'several people walking across a square',
  'a rocket on its launch pad before lift-off',
  'person near the loading dock after midnight',
];
const THREADS = Math.min(2, os.cpus().length);
const MIN_MS = 1500;
const MIN_ITERATIONS = 5;

interface Timing {
  e2e: number;
  bare: number;
  iterations: number;
}

/** Runs `bare` and `e2e` alternately (after a warm-up) until both have had MIN_MS; returns mean ms per iteration. */
async function measure(bare: () => Promise<unknown>, e2e: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < 2; i++) {
    await bare();
    await e2e();
  }
  let bareMs = 0;
  let e2eMs = 0;
  let iterations = 0;
  while (iterations < MIN_ITERATIONS || bareMs < MIN_MS || e2eMs < MIN_MS) {
    let t = performance.now();
    await bare();
    bareMs += performance.now() - t;
    t = performance.now();
    await e2e();
    e2eMs += performance.now() - t;
    iterations++;
  }
  return { e2e: e2eMs / iterations, bare: bareMs / iterations, iterations };
}

function report(role: string, batch: number, unit: string, timing: Timing, extra = ''): void {
  const perSecond = (ms: number) => ((batch * 1000) / ms).toFixed(1);
  const ratio = timing.e2e / timing.bare;
  console.log(
    `${role.padEnd(15)} batch ${String(batch).padStart(2)}: ${perSecond(timing.e2e).padStart(7)} ${unit}/s end-to-end, ` +
      `${perSecond(timing.bare).padStart(7)} ${unit}/s bare run; e2e/bare ${ratio.toFixed(3)} ` +
      `(overhead ${((ratio - 1) * 100).toFixed(1)}%)${extra}`,
  );
}

async function loadModel(modelsDir: string, name: string): Promise<LoadedModel> {
  const dir = path.join(modelsDir, name);
  const { manifest, modelPath } = await readManifest(dir);
  const { session, provider } = await createSession(modelPath, { provider: 'cpu', threads: THREADS });
  return { manifest, session, info: { name: manifest.name, device: provider } };
}

/** A bare-run closure: the same input the role would build, prepared once, fed `runs` times per call. */
async function bareImageRun(model: LoadedModel, images: RgbImage[], runs: number): Promise<() => Promise<unknown>> {
  const spec = model.manifest.image!;
  const input = allocateInput(spec, images.length);
  const lookup = pixelLookup(spec);
  await Promise.all(images.map((image, i) => prepareImage(image, spec, lookup, input, i)));
  const dims =
    spec.layout === 'NHWC' ? [images.length, spec.height, spec.width, 3] : [images.length, 3, spec.height, spec.width];
  const feeds = { [spec.name]: new ort.Tensor(spec.dtype, input, dims) };
  return async () => {
    for (let i = 0; i < runs; i++) await model.session.run(feeds);
  };
}

/** Average ms to decode each photo of the batch and to preprocess it into the input tensor (for the breakdown). */
async function breakdown(model: LoadedModel, buffers: Buffer[]): Promise<string> {
  const spec = model.manifest.image!;
  const lookup = pixelLookup(spec);
  const input = allocateInput(spec, 1);
  let decodeMs = 0;
  let prepareMs = 0;
  const rounds = 5;
  for (let r = 0; r < rounds; r++) {
    for (const buffer of buffers) {
      let t = performance.now();
      const image = await decodeImage(buffer);
      decodeMs += performance.now() - t;
      t = performance.now();
      await prepareImage(image, spec, lookup, input, 0);
      prepareMs += performance.now() - t;
    }
  }
  const n = rounds * buffers.length;
  return `; per image: decode ${(decodeMs / n).toFixed(2)} ms, preprocess ${(prepareMs / n).toFixed(2)} ms`;
}

/** Benchmarks the default models on the fixture photos and prints throughput and overhead ratios. */
export default async function run(): Promise<void> {
  const modelsDir = await ensureDefaultModels();
  const files = await Promise.all(PHOTOS.map((name) => readFile(path.join(FIXTURES, name))));
  const decoded = await Promise.all(files.map((file) => decodeImage(file)));
  const pick = <T>(list: T[], n: number) => Array.from({ length: n }, (_, i) => list[i % list.length]);
  console.log(`onnxruntime-node CPU, ${THREADS} intra-op threads, ${os.cpus().length} cores; photos ${PHOTOS.length}`);

  const embedderModel = await loadModel(modelsDir, DEFAULT_MODEL_NAMES.imageEmbedder);
  const embedder = new OnnxImageEmbedder(embedderModel);
  for (const batch of [1, 8]) {
    const buffers = pick(files, batch);
    const bare = await bareImageRun(embedderModel, pick(decoded, batch), 1);
    const timing = await measure(bare, async () =>
      embedder.embed(await Promise.all(buffers.map((b) => decodeImage(b)))),
    );
    report('image-embedder', batch, 'images', timing, batch === 8 ? await breakdown(embedderModel, files) : '');
  }
  await embedderModel.session.release();

  const detectorModel = await loadModel(modelsDir, DEFAULT_MODEL_NAMES.detector);
  const detector = new OnnxDetector(detectorModel);
  for (const batch of [1, 8]) {
    const buffers = pick(files, batch);
    // The detector graph takes one image per run, so a batch is `batch` sequential runs in both measurements.
    const bare = await bareImageRun(detectorModel, pick(decoded, 1), batch);
    const timing = await measure(bare, async () => {
      for (const buffer of buffers) await detector.detect(await decodeImage(buffer), 0.3);
    });
    report('detector', batch, 'images', timing, batch === 8 ? await breakdown(detectorModel, files) : '');
  }
  await detectorModel.session.release();

  const poseModel = await loadModel(modelsDir, DEFAULT_MODEL_NAMES.poseEstimator);
  const pose = new OnnxPoseEstimator(poseModel);
  for (const batch of [1, 8]) {
    const buffers = pick(files, batch);
    const bare = await bareImageRun(poseModel, pick(decoded, 1), batch);
    const timing = await measure(bare, async () => {
      for (const buffer of buffers) await pose.estimate(await decodeImage(buffer));
    });
    report('pose-estimator', batch, 'images', timing, batch === 8 ? await breakdown(poseModel, files) : '');
  }
  await poseModel.session.release();

  const textModel = await loadModel(modelsDir, DEFAULT_MODEL_NAMES.textEmbedder);
  const vocabulary = JSON.parse(
    await readFile(path.join(modelsDir, DEFAULT_MODEL_NAMES.textEmbedder, textModel.manifest.tokenizer!.vocab), 'utf8'),
  ) as VocabularyEntry[];
  const text = OnnxTextEmbedder.create(textModel, vocabulary);
  const tokenizer = new UseSentencePieceTokenizer(vocabulary);
  for (const batch of [1, 8]) {
    const sentences = pick(SENTENCES, batch);
    const encodings = sentences.map((s) => tokenizer.encode(s));
    const indices = encodings.flatMap((ids, i) => ids.flatMap((_, j) => [i, j]));
    const values = encodings.flat();
    const feeds = {
      indices: new ort.Tensor('int32', Int32Array.from(indices), [values.length, 2]),
      values: new ort.Tensor('int32', Int32Array.from(values), [values.length]),
    };
    const timing = await measure(
      () => textModel.session.run(feeds),
      () => text.embed(sentences),
    );
    report('text-embedder', batch, 'sentences', timing);
  }
  await textModel.session.release();
}
