/**
 * Inference runtime throughput per role at batch 1 and 8, and the cost of everything around the model:
 * end-to-end time (decode + preprocess + run + postprocess) divided by bare `session.run` time on a prepared
 * tensor, both measured on the same session, interleaved, in the same run.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { decodeImage } from '../services/lib/media/image-decode.js';
import {
  createSession,
  DEFAULT_MODEL_NAMES,
  loadModels,
  OnnxDetector,
  OnnxImageEmbedder,
  OnnxPoseEstimator,
  OnnxTextEmbedder,
  readManifest,
  type LoadedModel,
  type RgbImage,
} from '../services/lib/inference/index.js';
import { allocateInput, prepareImage } from '../services/lib/inference/image-tensor.js';
import {
  UseSentencePieceTokenizer,
  type VocabularyEntry,
} from '../services/lib/inference/use-sentencepiece-tokenizer.js';
import { ensureDefaultModels } from '../test/support/models.js';
import { FIXTURE_IMAGES_DIR, FIXTURE_PHOTOS } from '../test/support/fixtures.js';

const FIXTURES = FIXTURE_IMAGES_DIR;
const PHOTOS = FIXTURE_PHOTOS;
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
const MIN_ITERATIONS = 9;

interface Timing {
  /** Median ms per iteration: bare session.run; role call on decoded images; decode + role call. */
  bare: number;
  decoded: number;
  e2e: number;
}

/**
 * Runs the closures in turn (after a warm-up) until each has had MIN_MS; returns the median ms per iteration of
 * each, so bursts from other processes on a shared machine move the figures less than a mean would.
 */
async function medians(steps: (() => Promise<unknown>)[]): Promise<number[]> {
  for (let i = 0; i < 2; i++) for (const step of steps) await step();
  const samples: number[][] = steps.map(() => []);
  const totals = steps.map(() => 0);
  while (samples[0].length < MIN_ITERATIONS || totals.some((t) => t < MIN_MS)) {
    for (let s = 0; s < steps.length; s++) {
      const t = performance.now();
      await steps[s]();
      const ms = performance.now() - t;
      samples[s].push(ms);
      totals[s] += ms;
    }
  }
  return samples.map((list) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)]);
}

async function measure(
  bare: () => Promise<unknown>,
  decoded: () => Promise<unknown>,
  e2e: () => Promise<unknown>,
): Promise<Timing> {
  const [bareMs, decodedMs, e2eMs] = await medians([bare, decoded, e2e]);
  return { bare: bareMs, decoded: decodedMs, e2e: e2eMs };
}

function report(role: string, batch: number, unit: string, timing: Timing, extra = ''): void {
  const perSecond = (ms: number) => ((batch * 1000) / ms).toFixed(1).padStart(7);
  const pct = (ms: number) => `${(((ms - timing.bare) / timing.bare) * 100).toFixed(1)}%`;
  console.log(
    `${role.padEnd(15)} batch ${String(batch).padStart(2)}: ${perSecond(timing.e2e)} ${unit}/s end-to-end, ` +
      `${perSecond(timing.decoded)} without decode, ${perSecond(timing.bare)} bare run | ` +
      `e2e/bare ${(timing.e2e / timing.bare).toFixed(3)} (+${pct(timing.e2e)}), ` +
      `pre+post/bare ${(timing.decoded / timing.bare).toFixed(3)} (+${pct(timing.decoded)})${extra}`,
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
  await Promise.all(images.map((image, i) => prepareImage(image, spec, input, i)));
  const dims =
    spec.layout === 'NHWC' ? [images.length, spec.height, spec.width, 3] : [images.length, 3, spec.height, spec.width];
  const feeds = { [spec.name]: new ort.Tensor(spec.dtype, input, dims) };
  return async () => {
    for (let i = 0; i < runs; i++) await model.session.run(feeds, [...model.session.outputNames]);
  };
}

/** Average ms to decode each photo of the batch and to preprocess it into the input tensor (for the breakdown). */
async function breakdown(model: LoadedModel, buffers: Buffer[]): Promise<string> {
  const spec = model.manifest.image!;
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
      await prepareImage(image, spec, input, 0);
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
  console.log(
    `onnxruntime-node CPU, ${THREADS} intra-op threads (idle threads not spinning), ${os.cpus().length} cores; load ${os.loadavg()[0].toFixed(1)}; photos ${PHOTOS.length}`,
  );

  const embedderModel = await loadModel(modelsDir, DEFAULT_MODEL_NAMES.imageEmbedder);
  const embedder = new OnnxImageEmbedder(embedderModel);
  for (const batch of [1, 8]) {
    const buffers = pick(files, batch);
    const bare = await bareImageRun(embedderModel, pick(decoded, batch), 1);
    const images = pick(decoded, batch);
    const timing = await measure(
      bare,
      () => embedder.embed(images),
      async () => embedder.embed(await Promise.all(buffers.map((b) => decodeImage(b)))),
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
    const images = pick(decoded, batch);
    const timing = await measure(
      bare,
      async () => {
        for (const image of images) await detector.detect(image, 0.3);
      },
      async () => {
        for (const buffer of buffers) await detector.detect(await decodeImage(buffer), 0.3);
      },
    );
    report('detector', batch, 'images', timing, batch === 8 ? await breakdown(detectorModel, files) : '');
  }
  await detectorModel.session.release();

  const poseModel = await loadModel(modelsDir, DEFAULT_MODEL_NAMES.poseEstimator);
  const pose = new OnnxPoseEstimator(poseModel);
  for (const batch of [1, 8]) {
    const buffers = pick(files, batch);
    const bare = await bareImageRun(poseModel, pick(decoded, 1), batch);
    const images = pick(decoded, batch);
    const timing = await measure(
      bare,
      async () => {
        for (const image of images) await pose.estimate(image);
      },
      async () => {
        for (const buffer of buffers) await pose.estimate(await decodeImage(buffer));
      },
    );
    report('pose-estimator', batch, 'images', timing, batch === 8 ? await breakdown(poseModel, files) : '');
  }
  await poseModel.session.release();

  const textModel = await loadModel(modelsDir, DEFAULT_MODEL_NAMES.textEmbedder);
  const vocabulary = JSON.parse(
    await readFile(path.join(modelsDir, DEFAULT_MODEL_NAMES.textEmbedder, textModel.manifest.tokenizer!.vocab), 'utf8'),
  ) as VocabularyEntry[];
  const text = OnnxTextEmbedder.create(textModel, { vocabulary });
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
    // Text has no decode step: the middle and last measurements are the same call.
    const timing = await measure(
      () => textModel.session.run(feeds, [...textModel.session.outputNames]),
      () => text.embed(sentences),
      () => text.embed(sentences),
    );
    report('text-embedder', batch, 'sentences', timing);
  }
  await textModel.session.release();

  // Cost of hosting sessions in worker threads (inputs copied across, outputs transferred back) against in-process.
  const configs = { modelsDir, provider: 'cpu' as const, threads: THREADS };
  const inProcess = await loadModels({ ...configs, isolation: 'main' });
  const isolated = await loadModels({ ...configs, isolation: 'worker' });
  await Promise.all([inProcess.warmUp(['imageEmbedder', 'detector']), isolated.warmUp(['imageEmbedder', 'detector'])]);
  const eight = pick(decoded, 8);
  const [embedMain, embedWorker, detectMain, detectWorker] = await medians([
    () => inProcess.imageEmbedder.embed(eight),
    () => isolated.imageEmbedder.embed(eight),
    () => inProcess.detector.detect(decoded[0], 0.3),
    () => isolated.detector.detect(decoded[0], 0.3),
  ]);
  console.log(
    `worker isolation: image-embedder batch 8 ${(embedWorker / embedMain).toFixed(3)}× in-process time, ` +
      `detector ${(detectWorker / detectMain).toFixed(3)}×`,
  );
  await Promise.all([inProcess.release(), isolated.release()]);
}
