/** Imports the default models into `.models/` (or ARGUS_MODELS_DIR): `node --import tsx hack/import-models.ts [--force]`. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importDefaultModels } from '../services/lib/inference/import/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = path.resolve(process.env.ARGUS_MODELS_DIR ?? path.join(repoRoot, '.models'));
const written = await importDefaultModels(modelsDir, {
  force: process.argv.includes('--force'),
  log: (message) => console.log(message),
});
console.log(`${written.length} model(s) written to ${modelsDir}`);
