/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import onnxProto from 'onnx-proto';
import { loadModels, ModelRoleMismatchError, resolveModelDir, type LoadedModels } from './model-registry.js';
import type { RunGate } from './roles.js';
import { createSession, ExecutionProviderUnavailableError } from './session.js';

const { onnx } = onnxProto;
const FLOAT = 1;
const INT64 = 7;

/** A tiny real ONNX graph: [N,4,4,3] pixels → per-channel mean [N,3]; enough to drive the image-embedder path. */
function meanColourModel(): Uint8Array {
  const dims = (...d: (number | string)[]) => ({
    dim: d.map((v) => (typeof v === 'string' ? { dimParam: v } : { dimValue: v })),
  });
  const model = onnx.ModelProto.create({
    irVersion: 7,
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'mean-colour',
      node: [
        {
          opType: 'ReduceMean',
          input: ['pixels'],
          output: ['embedding'],
          attribute: [
            { name: 'axes', type: onnx.AttributeProto.AttributeType.INTS, ints: [1, 2] },
            { name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 0 },
          ],
        },
      ],
      input: [{ name: 'pixels', type: { tensorType: { elemType: FLOAT, shape: dims('n', 4, 4, 3) } } }],
      output: [{ name: 'embedding', type: { tensorType: { elemType: FLOAT, shape: dims('n', 3) } } }],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** A tiny CLIP-shaped text graph: int64 `input_ids` [N,8] cast to float, so the "embedding" is the padded ids. */
function idsAsEmbeddingModel(): Uint8Array {
  const shape = { dim: [{ dimParam: 'n' }, { dimValue: 8 }] };
  const model = onnx.ModelProto.create({
    irVersion: 7,
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'ids',
      node: [
        {
          opType: 'Cast',
          input: ['input_ids'],
          output: ['text_embeds'],
          attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }],
        },
      ],
      input: [{ name: 'input_ids', type: { tensorType: { elemType: INT64, shape } } }],
      output: [{ name: 'text_embeds', type: { tensorType: { elemType: FLOAT, shape } } }],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

const imageSpec = {
  name: 'pixels',
  width: 4,
  height: 4,
  resize: 'stretch',
  layout: 'NHWC',
  dtype: 'float32',
  scale: 1,
  mean: [0, 0, 0],
  std: [1, 1, 1],
  maxBatch: 2,
};

const manifests: Record<string, object> = {
  'mean-colour': {
    name: 'mean-colour',
    role: 'image-embedder',
    file: 'model.onnx',
    image: imageSpec,
    outputs: { embedding: 'embedding' },
    format: 'embedding',
    dimension: 3,
  },
  'text-model': {
    name: 'text-model',
    role: 'text-embedder',
    file: 'model.onnx',
    tokenizer: { kind: 'use-sentencepiece', vocab: 'vocab.json' },
    outputs: { embedding: 'out' },
    format: 'embedding',
    dimension: 512,
  },
  'clip-text': {
    name: 'clip-text',
    role: 'text-embedder',
    file: 'model.onnx',
    tokenizer: { kind: 'clip-bpe', vocab: 'vocab.json', merges: 'merges.txt', maxLength: 8 },
    outputs: { embedding: 'text_embeds' },
    format: 'embedding',
    dimension: 8,
  },
  'detector-model': {
    name: 'detector-model',
    role: 'detector',
    file: 'model.onnx',
    image: { ...imageSpec, width: 512, height: 512, maxBatch: 1 },
    outputs: { detections: 'out' },
    format: 'xyxy-score-class',
    labels: ['person'],
  },
  'pose-model': {
    name: 'pose-model',
    role: 'pose-estimator',
    file: 'model.onnx',
    image: { ...imageSpec, width: 192, height: 192, resize: 'letterbox', dtype: 'int32', maxBatch: 1 },
    outputs: { keypoints: 'out' },
    format: 'movenet',
  },
};

describe('loadModels', () => {
  let modelsDir: string;
  const config = () => ({
    modelsDir,
    provider: 'cpu' as const,
    threads: 1,
    imageEmbedder: 'mean-colour',
    textEmbedder: 'text-model',
    detector: 'detector-model',
    poseEstimator: 'pose-model',
  });

  beforeAll(async () => {
    modelsDir = await mkdtemp(path.join(os.tmpdir(), 'argus-models-'));
    for (const [name, manifest] of Object.entries(manifests)) {
      await mkdir(path.join(modelsDir, name));
      await writeFile(path.join(modelsDir, name, 'manifest.json'), JSON.stringify(manifest));
    }
    await writeFile(path.join(modelsDir, 'mean-colour', 'model.onnx'), meanColourModel());
    const clip = path.join(modelsDir, 'clip-text');
    await writeFile(path.join(clip, 'model.onnx'), idsAsEmbeddingModel());
    await writeFile(
      path.join(clip, 'vocab.json'),
      JSON.stringify({ '<|startoftext|>': 4, '<|endoftext|>': 5, 'a</w>': 3 }),
    );
    await writeFile(path.join(clip, 'merges.txt'), '#version: 0.2\n');
  });

  afterAll(async () => {
    await rm(modelsDir, { recursive: true, force: true });
  });

  it('rejects a model whose manifest role does not match its slot', async () => {
    await expect(loadModels({ ...config(), imageEmbedder: 'detector-model' })).rejects.toThrow(ModelRoleMismatchError);
    await expect(loadModels({ ...config(), poseEstimator: path.join(modelsDir, 'text-model') })).rejects.toThrow(
      /has role text-embedder but is configured as pose-estimator/,
    );
  });

  it('loads only the roles a process names: other models need not exist and never get a session', async () => {
    const models = await loadModels({
      ...config(),
      roles: ['imageEmbedder'],
      poseEstimator: 'missing',
      detector: '..',
    });
    expect(models.status().map((s) => [s.role, s.name, s.loaded])).toEqual([['image-embedder', 'mean-colour', false]]);
    expect(Object.keys(models).sort()).toEqual(['imageEmbedder', 'release', 'status', 'warmUp']);
    await expect(models.warmUp(['poseEstimator' as 'imageEmbedder'])).rejects.toThrow(
      /poseEstimator role was not loaded/,
    );
    await models.warmUp();
    expect(models.status()[0].loaded).toBe(true);
    await models.release();
  });

  it('rejects names outside the models directory and missing manifests', async () => {
    expect(() => resolveModelDir(modelsDir, '../etc')).toThrow(/directory name/);
    expect(resolveModelDir(modelsDir, '/opt/models/yolo')).toBe('/opt/models/yolo');
    await expect(loadModels({ ...config(), detector: 'missing' })).rejects.toThrow(/no model manifest/);
  });

  describe('with a real (tiny) ONNX image embedder', () => {
    let models: LoadedModels;
    beforeAll(async () => {
      models = await loadModels(config());
    });
    afterAll(async () => {
      await models.release();
    });

    it('reports names and device before any session exists, then creates it on first use', async () => {
      expect(models.status().map((s) => [s.role, s.name, s.device, s.loaded])).toEqual([
        ['image-embedder', 'mean-colour', 'cpu', false],
        ['text-embedder', 'text-model', 'cpu', false],
        ['detector', 'detector-model', 'cpu', false],
        ['pose-estimator', 'pose-model', 'cpu', false],
      ]);
      expect(models.imageEmbedder.dimension).toBe(3);
      const solid = (r: number, g: number, b: number, size = 8) => ({
        width: size,
        height: size,
        data: new Uint8Array(size * size * 3).map((_, i) => [r, g, b][i % 3]),
      });
      // Three images with maxBatch 2: two session runs, order preserved, each vector unit-length.
      const vectors = await models.imageEmbedder.embed([solid(30, 40, 0), solid(0, 0, 9), solid(1, 2, 2, 5)]);
      expect(vectors.map((v) => Array.from(v).map((x) => Number(x.toFixed(4))))).toEqual([
        [0.6, 0.8, 0],
        [0, 0, 1],
        [0.3333, 0.6667, 0.6667],
      ]);
      expect(models.status()[0].loaded).toBe(true);
    });

    it('gives the same vectors from a session hosted in a worker thread', async () => {
      const workerModels = await loadModels({ ...config(), isolation: 'worker' });
      try {
        const image = { width: 4, height: 4, data: new Uint8Array(48).map((_, i) => [30, 40, 0][i % 3]) };
        const [fromWorker] = await workerModels.imageEmbedder.embed([image]);
        const [fromMain] = await models.imageEmbedder.embed([image]);
        expect(Array.from(fromWorker)).toEqual(Array.from(fromMain));
        expect(workerModels.status()[0]).toMatchObject({ loaded: true, device: 'cpu' });
      } finally {
        await workerModels.release();
      }
    });

    it("passes each session run, and only the run, through the caller's gate", async () => {
      const image = (r: number) => ({ width: 4, height: 4, data: new Uint8Array(48).map((_, i) => [r, 1, 0][i % 3]) });
      const admitted: Array<() => void> = [];
      let gated = 0;
      let ran = 0;
      const gate: RunGate = async (run) => {
        gated++;
        await new Promise<void>((resolve) => admitted.push(resolve));
        ran++;
        return run();
      };
      // Three images with maxBatch 2: two runs, each held at the gate until admitted.
      const pending = models.imageEmbedder.embed([image(10), image(20), image(30)], { gate });
      const settled = pending.then(() => true);
      const until = async (condition: () => boolean) => {
        for (let turn = 0; !condition(); turn++) {
          if (turn > 1000) throw new Error('the gate was not reached');
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      await until(() => gated === 1);
      expect(ran).toBe(0);
      admitted.shift()!();
      await until(() => gated === 2);
      expect(ran).toBe(1);
      expect(await Promise.race([settled, new Promise((resolve) => setImmediate(() => resolve(false)))])).toBe(false);
      admitted.shift()!();
      const vectors = await pending;
      expect(vectors).toHaveLength(3);
      expect(Array.from(vectors[2])).toEqual(Array.from((await models.imageEmbedder.embed([image(30)]))[0]));
      // Preprocessing happens before the gate: an image it rejects never reaches it.
      const broken = { width: 4, height: 4, data: new Uint8Array(5) };
      await expect(models.imageEmbedder.embed([broken], { gate })).rejects.toThrow(RangeError);
      expect(gated).toBe(2);
    });

    it('feeds a CLIP-style text tower padded int64 input_ids', async () => {
      const clipModels = await loadModels({ ...config(), textEmbedder: 'clip-text' });
      try {
        const [vector] = await clipModels.textEmbedder.embed(['A a']);
        // start, "a", "a", end, then padding with the end id; normalised.
        const ids = [4, 3, 3, 5, 5, 5, 5, 5];
        const norm = Math.hypot(...ids);
        expect(Array.from(vector).map((v) => v * norm)).toEqual(ids.map((id) => expect.closeTo(id, 4)));
      } finally {
        await clipModels.release();
      }
    });

    it('fails a lazy session clearly when the ONNX file is missing', async () => {
      await expect(models.detector.detect({ width: 1, height: 1, data: new Uint8Array(3) }, 0.3)).rejects.toThrow();
      expect(models.status()[2].loaded).toBe(false);
    });
  });
});

describe('createSession', () => {
  it('requests CUDA then CPU, and without CUDA fails clearly or falls back when allowed', async () => {
    const bytes = meanColourModel();
    const cpu = await createSession(bytes, { provider: 'cpu', threads: 1 });
    expect(cpu.provider).toBe('cpu');
    await cpu.session.release();
    const cuda = await createSession(bytes, { provider: 'cuda', threads: 1 }).catch((error: Error) => error);
    if (cuda instanceof Error) {
      expect(cuda).toBeInstanceOf(ExecutionProviderUnavailableError);
      const fallback = await createSession(bytes, { provider: 'cuda', threads: 1, fallbackToCpu: true });
      expect(fallback.provider).toBe('cpu');
      await fallback.session.release();
    } else {
      expect(cuda.provider).toBe('cuda');
      await cuda.session.release();
    }
  });
  it("runs a worker-hosted session and its intra-op threads below the event loop's priority (Linux)", async () => {
    const niceOf = async () => {
      const result = new Map<string, number>();
      for (const task of await readdir('/proc/self/task')) {
        const stat = await readFile(`/proc/self/task/${task}/stat`, 'utf8').catch(() => '');
        if (stat) result.set(task, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
      }
      return result;
    };
    const before = await niceOf();
    const { session } = await createSession(meanColourModel(), { provider: 'cpu', threads: 2, isolation: 'worker' });
    const after = await niceOf();
    await session.release();
    const added = [...after].filter(([task]) => !before.has(task)).map(([, nice]) => nice);
    const loop = before.get(String(process.pid))!;
    expect(after.get(String(process.pid))).toBe(loop); // the event loop's thread keeps its priority
    const lowered = Math.min(19, loop + 10);
    expect(added.filter((nice) => nice === lowered).length).toBeGreaterThanOrEqual(2); // the worker and onnxruntime's thread
  });
});
