import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { readManifest } from '../../lib/inference/index.js';

/**
 * The detector models in the models directory: every folder whose manifest has the detector role, by name, sorted.
 * Folders without a readable manifest are skipped (other roles' models, half-imported ones).
 */
export async function listDetectionModels(modelsDir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = (await readdir(modelsDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
  const detectors = await Promise.all(
    entries.map(async (name) => {
      try {
        const { manifest } = await readManifest(path.join(modelsDir, name));
        return manifest.role === 'detector' ? name : undefined;
      } catch {
        return undefined;
      }
    }),
  );
  return detectors.filter((name): name is string => name !== undefined).sort();
}
