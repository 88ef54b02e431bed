/** `helm template` of charts/argus with helm from the npm package (hack/k8s-tools.sh), for the chart tests. */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
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
export function renderChart(...set: string[]): Promise<Manifest[]> {
  return renderChartWith({}, ...set);
}

/** What else `helm template` is told: API versions the cluster has (`--api-versions`), another chart folder. */
export interface RenderOptions {
  apiVersions?: string[];
  chart?: string;
  /** Values files (`-f`), relative to the repository root. */
  valuesFiles?: string[];
}

/** renderChart with options. */
export async function renderChartWith(options: RenderOptions, ...set: string[]): Promise<Manifest[]> {
  const { binary, env } = await helmTool();
  const chart = options.chart ?? path.join(repoRoot, 'charts/argus');
  const args = [
    'template',
    'rel',
    chart,
    '--include-crds',
    '--namespace',
    'argus',
    ...(options.apiVersions ?? []).flatMap((v) => ['--api-versions', v]),
    ...(options.valuesFiles ?? []).flatMap((f) => ['--values', path.join(repoRoot, f)]),
    ...set.flatMap((s) => ['--set', s]),
  ];
  const { stdout } = await run(binary, args, { env, maxBuffer: 64 * 1024 * 1024 });
  return YAML.parseAllDocuments(stdout)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

/**
 * The chart's NOTES.txt as `helm install` prints it (helm template leaves NOTES out): rendered from a scratch copy of
 * the chart where the notes are a named template inside a manifest.
 */
export async function renderNotes(...set: string[]): Promise<string> {
  const copy = await mkdtemp(path.join(os.tmpdir(), 'argus-notes-'));
  try {
    await cp(path.join(repoRoot, 'charts/argus'), copy, { recursive: true });
    const notes = await readFile(path.join(copy, 'templates/NOTES.txt'), 'utf8');
    await rm(path.join(copy, 'templates/NOTES.txt'));
    await writeFile(path.join(copy, 'templates/_notes.tpl'), `{{- define "test.notes" -}}\n${notes}{{- end -}}\n`);
    await writeFile(
      path.join(copy, 'templates/notes.yaml'),
      'apiVersion: v1\nkind: Notes\nmetadata: {name: notes}\ntext: {{ include "test.notes" . | toJson }}\n',
    );
    const manifests = await renderChartWith({ chart: copy }, ...set);
    return manifests.find((m) => m.kind === 'Notes')?.text as string;
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

/** A container variable as the chart writes it: a value, the downward API's namespace, or a key of a Secret. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string } };
}

/** What a Secret's key stands for in podEnv: `secret:<name>/<key>` (the value is the user's, never the chart's). */
export const secretValue = (name: string, key: string) => `secret:${name}/${key}`;

/**
 * A service pod's environment as its process sees it: its ConfigMap, then the container's env, with the downward
 * API's namespace filled in as `namespace` and a Secret's key as `secretValue(name, key)`.
 */
export function podEnv(manifests: Manifest[], service: string, namespace = 'argus'): Record<string, string> {
  const named = (kind: string) => manifests.find((m) => m.kind === kind && m.metadata.name === `rel-argus-${service}`);
  const container = named('Deployment')?.spec.template.spec.containers[0];
  const vars: Record<string, string> = { ...named('ConfigMap')?.data };
  for (const e of container.env as EnvVar[]) {
    const ref = e.valueFrom?.secretKeyRef;
    vars[e.name] = e.value ?? (ref ? secretValue(ref.name, ref.key) : namespace);
  }
  return vars;
}
