import { chmod, copyFile, mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ModelManifest } from '../manifest.js';
import { readCocoLabels } from './coco-labels.js';
import { convertTfjsGraph } from './convert.js';
import { defaultModels, type DefaultModelDefinition } from './default-models.js';
import { openModelSource } from './model-source.js';
import { packageInfo } from './package-files.js';
import { readTfjsModel } from './read-tfjs-model.js';

/** Options for {@link importDefaultModels}. */
export interface ImportOptions {
  /** Re-import models that are already present. */
  force?: boolean;
  /** Progress lines (one per model). */
  log?: (message: string) => void;
  /** The models to import (default: the default set); e.g. `[multiPoseModel]` for a service that needs it. */
  models?: DefaultModelDefinition[];
}

const modelFileName = 'model.onnx';
/**
 * A published model folder: readable by every user. mkdtemp makes it 0700, so models imported by root (an image
 * build, a volume filled by an init container) would be unreadable by the non-root user the services run as.
 */
const MODEL_DIR_MODE = 0o755;

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Converts one default model and writes model.onnx, manifest.json and any copied files into `dir`. */
async function buildModel(definition: DefaultModelDefinition, dir: string): Promise<number> {
  const packageSource = await openModelSource(definition);
  try {
    return await convertModel(definition, packageSource.dir, dir);
  } finally {
    await packageSource.remove();
  }
}

async function convertModel(definition: DefaultModelDefinition, packageDir: string, dir: string): Promise<number> {
  const { version, license } = await packageInfo(packageDir);
  const model = await readTfjsModel(path.join(packageDir, definition.modelFile));
  const source = `${definition.packageName}@${version}/${definition.modelFile}`;
  const onnx = convertTfjsGraph(model, {
    graphName: definition.name,
    docString: `Converted from ${source} by the Argus TFJS importer`,
    inputs: definition.inputs,
    outputs: definition.outputs,
  });
  await writeFile(path.join(dir, modelFileName), onnx);
  for (const [from, to] of Object.entries(definition.copies ?? {})) {
    await copyFile(path.join(packageDir, from), path.join(dir, to));
  }
  const manifest: ModelManifest = {
    name: definition.name,
    file: modelFileName,
    source,
    license,
    ...definition.manifest,
    ...(definition.withCocoLabels ? { labels: await readCocoLabels(packageDir) } : {}),
  };
  await writeFile(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return onnx.byteLength;
}

/**
 * Publishes a finished temp directory as `target` with renames only, so readers see either no model or a whole one.
 * Returns false when another process published the model first (its copy is kept).
 */
async function publish(tempDir: string, target: string, replace: boolean): Promise<boolean> {
  if (replace && (await exists(target))) {
    const old = await mkdtemp(path.join(path.dirname(target), '.old-'));
    await rename(target, path.join(old, 'model'));
    await rename(tempDir, target);
    await rm(old, { recursive: true, force: true });
    return true;
  }
  try {
    await rename(tempDir, target);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Imports the default models (TFJS graphs shipped in npm packages) into `<modelsDir>/<name>/` as ONNX + manifest.
 * Each model is built in a temp directory and renamed into place. Models already present are skipped unless `force`.
 * Returns the names of the models this call wrote.
 */
export async function importDefaultModels(modelsDir: string, options: ImportOptions = {}): Promise<string[]> {
  const log = options.log ?? (() => undefined);
  await mkdir(modelsDir, { recursive: true });
  const written: string[] = [];
  for (const definition of options.models ?? defaultModels) {
    const target = path.join(modelsDir, definition.name);
    if (!options.force && (await exists(path.join(target, 'manifest.json')))) {
      log(`${definition.name}: present, skipped`);
      continue;
    }
    const tempDir = await mkdtemp(path.join(modelsDir, `.tmp-${definition.name}-`));
    try {
      const started = Date.now();
      const bytes = await buildModel(definition, tempDir);
      await chmod(tempDir, MODEL_DIR_MODE);
      if (await publish(tempDir, target, options.force ?? false)) {
        written.push(definition.name);
        log(`${definition.name}: imported in ${Date.now() - started} ms (${(bytes / 1e6).toFixed(1)} MB ONNX)`);
      } else {
        log(`${definition.name}: imported concurrently by another process, kept theirs`);
      }
    } finally {
      await rm(tempDir, { recursive: true, force: true });
    }
  }
  return written;
}
