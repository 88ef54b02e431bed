/**
 * Start time and memory of `argus serve <service>` run from the compiled JavaScript (`node dist/bin/argus.js`, what
 * the image runs) against the TypeScript sources through tsx (`node --import tsx bin/argus.ts`, what `npm start`
 * runs), in the same run: tsx with its transform cache warm (a developer's second start) and cold (a fresh TMPDIR,
 * as every start of a container with a tmpfs /tmp is). Start = spawn to the first 200 from the service's health;
 * memory = the process's RSS then, and its peak (VmHWM). alert-dispatch loads no model; dataprep loads four.
 * Builds dist/ first when it is missing (`npm run build`). Rounds alternate the variants; medians are reported, with
 * ratios against tsx (warm).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { childEnv, REPO_ROOT, spawnArgus, tempDir } from '../test/support/argus-process.js';
import { ensureDefaultModels, testModelsDir } from '../test/support/models.js';

const ROUNDS = 5;
const SERVICES = [
  { name: 'alert-dispatch', port: 'ALERT_DISPATCH_PORT', health: '/api/v1/health' },
  { name: 'dataprep', port: 'MM_DATAPREP_HOST_PORT', health: '/v1/dataprep/health' },
];

interface Variant {
  label: string;
  args: string[];
  /** A fresh TMPDIR per start: tsx's transform cache (TMPDIR/tsx-<uid>) starts empty. */
  coldTmp?: boolean;
}

const VARIANTS: Variant[] = [
  { label: 'tsx, cache warm', args: ['--import', 'tsx', 'bin/argus.ts'] },
  { label: 'tsx, cache cold', args: ['--import', 'tsx', 'bin/argus.ts'], coldTmp: true },
  { label: 'compiled (dist/)', args: ['dist/bin/argus.js'] },
];

interface Sample {
  startMs: number;
  rssMb: number;
  peakMb: number;
}

/** VmRSS and VmHWM of a live process, in MB. */
function memory(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

async function startOnce(service: (typeof SERVICES)[number], variant: Variant): Promise<Sample> {
  const data = await tempDir('argus-bench-startup-');
  const tmp = variant.coldTmp ? await tempDir('argus-bench-tmp-') : undefined;
  const env = childEnv({
    ARGUS_DATA_DIR: data.dir,
    ARGUS_MODELS_DIR: testModelsDir(),
    [service.port]: '0',
    ...(tmp ? { TMPDIR: tmp.dir } : {}),
  });
  const started = performance.now();
  const child = spawnArgus(process.execPath, [...variant.args, 'serve', service.name], env);
  try {
    const listening = await child.waitForRecord((r) => r.message === `${service.name} listening`);
    const url = `${String(listening.url).replace('0.0.0.0', '127.0.0.1')}${service.health}`;
    for (let attempt = 0; ; attempt++) {
      const ok = await fetch(url).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (attempt === 2000) throw new Error(`${service.name} (${variant.label}): ${url} never answered 200`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const startMs = performance.now() - started;
    return { startMs, ...memory(child.child.pid!) };
  } finally {
    child.child.kill('SIGTERM');
    await child.closed;
    await data.remove();
    await tmp?.remove();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export default async function startupBench(): Promise<void> {
  if (!existsSync(path.join(REPO_ROOT, 'dist/bin/argus.js'))) {
    console.log('dist/ is missing: npm run build');
    execFileSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  await ensureDefaultModels();
  for (const service of SERVICES) {
    // One start of each variant first: the OS file cache and tsx's warm cache are primed for every variant alike.
    for (const variant of VARIANTS) await startOnce(service, variant);
    const samples = new Map<Variant, Sample[]>(VARIANTS.map((v) => [v, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of VARIANTS) samples.get(variant)!.push(await startOnce(service, variant));
    }
    const baseline = samples.get(VARIANTS[0])!;
    const base = { start: median(baseline.map((s) => s.startMs)), rss: median(baseline.map((s) => s.rssMb)) };
    console.log(`\nserve ${service.name} (median of ${ROUNDS}; ratios against tsx, cache warm)`);
    console.log('| variant | start → healthy | ratio | RSS when healthy | ratio | peak RSS |');
    console.log('|---|---|---|---|---|---|');
    for (const [variant, list] of samples) {
      const start = median(list.map((s) => s.startMs));
      const rss = median(list.map((s) => s.rssMb));
      const peak = median(list.map((s) => s.peakMb));
      console.log(
        `| ${variant.label} | ${start.toFixed(0)} ms | ${(start / base.start).toFixed(2)} | ${rss.toFixed(0)} MB | ` +
          `${(rss / base.rss).toFixed(2)} | ${peak.toFixed(0)} MB |`,
      );
    }
  }
}
