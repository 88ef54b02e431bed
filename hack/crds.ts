/** Writes `crds/*.yaml` and the chart's copies from operator/api: `npm run crds [-- --check]`. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crdManifests } from '../operator/api/crd-manifests.js';
import { runGenerator } from './generated-files.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The chart templates its CRDs (crds.enabled, crds.keep) from a copy: Helm cannot read files outside the chart.
const files = crdManifests().flatMap((m) => [
  { path: path.join('crds', m.fileName), content: m.yaml },
  { path: path.join('charts/argus/files/crds', m.fileName), content: m.yaml },
]);
await runGenerator('crds', repoRoot, files, '.yaml');
