/** `helm template` of charts/argus with helm from the npm package (hack/k8s-tools.sh), for the chart tests. */
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import YAML from 'yaml';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** One rendered object. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [field: string]: any;
}

let helm: Promise<{ binary: string; env: NodeJS.ProcessEnv }> | undefined;

/** helm, with a scratch HOME so nothing outside the test is read or written. */
export function helmTool(): Promise<{ binary: string; env: NodeJS.ProcessEnv }> {
  helm ??= (async () => {
    const { stdout } = await run('bash', [path.join(repoRoot, 'hack/k8s-tools.sh')]);
    const home = await mkdtemp(path.join(os.tmpdir(), 'argus-helm-'));
    const env = { ...process.env, HOME: home, XDG_CACHE_HOME: home, XDG_CONFIG_HOME: home, XDG_DATA_HOME: home };
    return { binary: path.join(stdout.trim(), 'helm'), env };
  })();
  return helm;
}

/** The chart rendered as release `rel` in namespace `argus` (CRDs included), with `--set` for each of `set`. */
export async function renderChart(...set: string[]): Promise<Manifest[]> {
  const { binary, env } = await helmTool();
  const chart = path.join(repoRoot, 'charts/argus');
  const args = [
    'template',
    'rel',
    chart,
    '--include-crds',
    '--namespace',
    'argus',
    ...set.flatMap((s) => ['--set', s]),
  ];
  const { stdout } = await run(binary, args, { env, maxBuffer: 64 * 1024 * 1024 });
  return YAML.parseAllDocuments(stdout)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

/**
 * A service pod's environment as its process sees it: its ConfigMap, then the container's env, with the downward
 * API's namespace (`valueFrom`) filled in as `namespace`.
 */
export function podEnv(manifests: Manifest[], service: string, namespace = 'argus'): Record<string, string> {
  const named = (kind: string) => manifests.find((m) => m.kind === kind && m.metadata.name === `rel-argus-${service}`);
  const container = named('Deployment')?.spec.template.spec.containers[0];
  const vars: Record<string, string> = { ...named('ConfigMap')?.data };
  for (const e of container.env as { name: string; value?: string }[]) vars[e.name] = e.value ?? namespace;
  return vars;
}
