/**
 * Writes the chart's RBAC rule files from the rules the code exports (`operator/drivers/kubernetes/rbac.ts`): every
 * `<NAME>_RULES` export becomes `charts/argus/files/rbac/<name>.yaml`. `npm run chart:rbac [-- --check]`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rbacRuleFiles } from './rbac-rule-files.js';
import { runGenerator } from './generated-files.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
await runGenerator('chart:rbac', repoRoot, rbacRuleFiles(), '.yaml');
