import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readManifest } from '../manifest.js';
import { importDefaultModels } from './import-models.js';

const names = [
  'centernet-mobilenetv3-coco',
  'mobilenet-v2-1.4-feature-vector',
  'movenet-lightning',
  'universal-sentence-encoder-lite',
];

describe('importDefaultModels', () => {
  let dir: string;
  let concurrent: string[][];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'argus-models-'));
    // Two importers racing into one directory: every model is published exactly once, whole.
    concurrent = await Promise.all([importDefaultModels(dir), importDefaultModels(dir)]);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes each default model once even when two imports race, leaving no temp directories', async () => {
    expect([...concurrent[0], ...concurrent[1]].sort()).toEqual(names);
    expect((await readdir(dir)).sort()).toEqual(names);
  });

  it('writes manifests the runtime validates, with source and licence', async () => {
    for (const name of names) {
      const { manifest, modelPath } = await readManifest(path.join(dir, name));
      expect(manifest.name).toBe(name);
      expect(manifest.source).toMatch(/^[@a-z/-]+@\d+\.\d+\.\d+\//);
      expect(['MIT', 'Apache-2.0']).toContain(manifest.license);
      expect((await stat(modelPath)).size).toBeGreaterThan(1_000_000);
    }
    expect((await stat(path.join(dir, 'universal-sentence-encoder-lite', 'vocab.json'))).size).toBeGreaterThan(100_000);
  });

  it('publishes folders and files every user can read (the services run as another user than the importer)', async () => {
    for (const name of names) {
      expect((await stat(path.join(dir, name))).mode & 0o777).toBe(0o755);
      for (const file of await readdir(path.join(dir, name))) {
        expect((await stat(path.join(dir, name, file))).mode & 0o004).toBe(0o004);
      }
    }
  });

  it('skips models already present and replaces them with force', async () => {
    const lines: string[] = [];
    expect(await importDefaultModels(dir, { log: (l) => lines.push(l) })).toEqual([]);
    expect(lines).toHaveLength(4);
    expect(lines.every((l) => l.endsWith('present, skipped'))).toBe(true);
    const before = (await stat(path.join(dir, 'movenet-lightning', 'model.onnx'))).mtimeMs;
    expect((await importDefaultModels(dir, { force: true })).sort()).toEqual(names);
    expect((await stat(path.join(dir, 'movenet-lightning', 'model.onnx'))).mtimeMs).toBeGreaterThanOrEqual(before);
    expect((await readdir(dir)).sort()).toEqual(names);
  });
});
