import path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { defaultModels, type DefaultModelDefinition } from './default-models.js';
import { findPackageDir } from './package-files.js';
import { openModelSource } from './model-source.js';
import { readTfjsModel } from './read-tfjs-model.js';
import type { TfjsModel } from './tfjs-model.js';

let ready: Promise<void> | undefined;

/** Test support: switches TFJS to its wasm backend (files loaded from node_modules, no network). */
export function useTfjsWasm(): Promise<void> {
  ready ??= (async () => {
    const dir = path.join(await findPackageDir('@tensorflow/tfjs-backend-wasm'), 'dist');
    setWasmPaths(`${dir}${path.sep}`);
    await tf.setBackend('wasm');
    await tf.ready();
  })();
  return ready;
}

/** Test support: loads an already-read TFJS graph model into TFJS itself (TFJS decodes the weights on its own). */
export async function loadReferenceModel(model: TfjsModel): Promise<tf.GraphModel> {
  await useTfjsWasm();
  const weightData = model.weightData.buffer.slice(
    model.weightData.byteOffset,
    model.weightData.byteOffset + model.weightData.byteLength,
  ) as ArrayBuffer;
  return tf.loadGraphModel(
    tf.io.fromMemory({
      modelTopology: model.json.modelTopology,
      weightSpecs: model.weightSpecs as tf.io.WeightsManifestEntry[],
      weightData,
    }),
  );
}

/** Test support: runs a reference model and returns the named output tensors as flat arrays. */
export async function runReference(
  model: tf.GraphModel,
  inputs: Record<string, { data: Float32Array | Int32Array; shape: number[]; dtype: 'float32' | 'int32' }>,
  outputs: string[],
): Promise<Float32Array[]> {
  const feeds: Record<string, tf.Tensor> = {};
  for (const [name, t] of Object.entries(inputs)) feeds[name] = tf.tensor(t.data, t.shape, t.dtype);
  // execute() covers static graphs; graphs with dynamic shapes (USE's Where) need executeAsync().
  let result: tf.Tensor | tf.Tensor[];
  try {
    result = model.execute(feeds, outputs);
  } catch {
    result = await model.executeAsync(feeds, outputs);
  }
  const tensors = Array.isArray(result) ? result : [result];
  const values = await Promise.all(tensors.map(async (t) => Float32Array.from(await t.data())));
  tf.dispose([...tensors, ...Object.values(feeds)]);
  return values;
}

export { tf };

/** Test support: the largest absolute element-wise difference between two equally long arrays. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length mismatch: ${a.length} vs ${b.length}`);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

/** Test support: reads the TFJS source of a default model and loads it into TFJS. */
export async function loadDefaultReference(
  name: string,
): Promise<{ model: tf.GraphModel; definition: DefaultModelDefinition }> {
  const definition = defaultModels.find((d) => d.name === name);
  if (!definition) throw new Error(`no default model ${name}`);
  return { model: await loadDefinitionReference(definition), definition };
}

/** Test support: reads the TFJS source of any model definition (an installed or a packed package) into TFJS. */
export async function loadDefinitionReference(definition: DefaultModelDefinition): Promise<tf.GraphModel> {
  const source = await openModelSource(definition);
  try {
    return await loadReferenceModel(await readTfjsModel(path.join(source.dir, definition.modelFile)));
  } finally {
    await source.remove();
  }
}
