import { readFile } from 'node:fs/promises';
import path from 'node:path';
import vm from 'node:vm';
import type { TfjsModel, TfjsModelJson } from './tfjs-model.js';

/**
 * Evaluates a browserify-style `.min.js` bundle (nsfwjs ships model.json and base64 weight shards this way) in an
 * empty sandbox and returns what it assigns to `module.exports`; the sandbox has no require, fs or network.
 */
async function evaluateBundle(file: string): Promise<unknown> {
  const module = { exports: {} as unknown };
  const sandbox = { module, exports: module.exports };
  vm.runInNewContext(await readFile(file, 'utf8'), sandbox, { filename: file, timeout: 30_000 });
  return module.exports;
}

async function readModelJson(file: string): Promise<TfjsModelJson> {
  const json = file.endsWith('.js') ? await evaluateBundle(file) : JSON.parse(await readFile(file, 'utf8'));
  const model = json as TfjsModelJson;
  if (!model?.modelTopology?.node || !Array.isArray(model.weightsManifest)) {
    throw new Error(`${file} is not a TFJS graph model (no modelTopology.node or weightsManifest)`);
  }
  return model;
}

async function readShard(modelDir: string, shardPath: string, bundled: boolean): Promise<Uint8Array> {
  if (!bundled) return new Uint8Array(await readFile(path.join(modelDir, shardPath)));
  const base64 = await evaluateBundle(path.join(modelDir, `${shardPath}.min.js`));
  if (typeof base64 !== 'string') throw new Error(`weight bundle ${shardPath}.min.js does not export a base64 string`);
  return new Uint8Array(Buffer.from(base64, 'base64'));
}

/**
 * Reads a TFJS graph model: `modelFile` is a `model.json` (binary shards beside it) or a `model.min.js` bundle
 * (shards as `<path>.min.js` base64 bundles). Weight bytes are concatenated in manifest order.
 */
export async function readTfjsModel(modelFile: string): Promise<TfjsModel> {
  const json = await readModelJson(modelFile);
  const bundled = modelFile.endsWith('.js');
  const modelDir = path.dirname(modelFile);
  const chunks: Uint8Array[] = [];
  for (const group of json.weightsManifest) {
    for (const shard of group.paths) chunks.push(await readShard(modelDir, shard, bundled));
  }
  const weightData = new Uint8Array(Buffer.concat(chunks));
  return { json, weightSpecs: json.weightsManifest.flatMap((g) => g.weights), weightData };
}
