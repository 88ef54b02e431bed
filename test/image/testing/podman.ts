import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../support/argus-process.js';

const run = promisify(execFile);

/** podman's settings for machines like CI's (runc, cgroupfs, host network): hack/image/containers.conf. */
export const CONTAINERS_CONF = process.env.CONTAINERS_CONF ?? path.join(REPO_ROOT, 'hack/image/containers.conf');
const env = { ...process.env, CONTAINERS_CONF, NODE_OPTIONS: '' };

/**
 * Why the image cannot be built and run on this machine, or undefined when it can: podman must answer (root, runc,
 * hack/image/containers.conf), and debootstrap must be there unless the local base image already is.
 */
export function podmanUnavailable(): string | undefined {
  const info = spawnSync('podman', ['info', '--format', '{{.Host.OCIRuntime.Name}}'], { env, encoding: 'utf8' });
  if (info.error) return 'podman is not installed (apt-get install podman runc debootstrap)';
  if (info.status !== 0) return `podman cannot run here: ${info.stderr.trim().split('\n').pop()}`;
  if (process.getuid?.() !== 0) return 'the local base image needs root (debootstrap, podman import)';
  const base = spawnSync('podman', ['image', 'exists', 'localhost/debian-base:bookworm'], { env });
  if (base.status !== 0 && spawnSync('debootstrap', ['--version']).error) return 'debootstrap is not installed';
  return undefined;
}

/** Runs podman with `args`; rejects with its stderr when it fails. */
export async function podman(args: string[], options: { timeoutMs?: number } = {}): Promise<string> {
  const { stdout } = await run('podman', args, { env, maxBuffer: 64 * 1024 * 1024, timeout: options.timeoutMs });
  return stdout;
}

/** Builds the image with hack/image/build.sh (bases made locally first); resolves to the build's output. */
export async function buildImage(tag: string): Promise<string> {
  try {
    const { stdout, stderr } = await run(path.join(REPO_ROOT, 'hack/image/build.sh'), [tag], {
      env,
      cwd: REPO_ROOT,
      maxBuffer: 256 * 1024 * 1024,
    });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`image build failed:\n${(stdout + stderr).slice(-4000)}`);
  }
}

/** What `podman image inspect` says about an image (the parts the tests read). */
export interface ImageFacts {
  Size: number;
  Config: { User: string; Entrypoint: string[]; Cmd: string[]; Labels: Record<string, string>; Env: string[] };
}

export async function inspectImage(tag: string): Promise<ImageFacts> {
  return (JSON.parse(await podman(['image', 'inspect', tag])) as ImageFacts[])[0];
}

/** A container's state (the parts the tests read). */
export interface ContainerState {
  ExitCode: number;
  Running: boolean;
  /** RFC 3339 with nanoseconds. */
  StartedAt: string;
}

export async function containerState(name: string): Promise<ContainerState> {
  return (JSON.parse(await podman(['inspect', name])) as Array<{ State: ContainerState }>)[0].State;
}

/** The container's log (stdout and stderr). */
export async function containerLogs(name: string): Promise<string> {
  const { stdout, stderr } = await run('podman', ['logs', name], { env, maxBuffer: 64 * 1024 * 1024 });
  return stdout + stderr;
}

/**
 * Milliseconds from the container's start (its process spawned) to the service's `<service> listening` log line:
 * the start-up of the process itself, without podman's own set-up.
 */
export async function startToListening(name: string, service: string): Promise<number> {
  const started = Date.parse((await containerState(name)).StartedAt);
  const line = (await containerLogs(name))
    .split('\n')
    .map((text) => (text.startsWith('{') ? (JSON.parse(text) as { message?: string; timestamp?: string }) : {}))
    .find((record) => record.message === `${service} listening`);
  if (!line?.timestamp) throw new Error(`${name}: no '${service} listening' line in its log`);
  return Date.parse(line.timestamp) - started;
}

/** Removes a container whatever its state (cleanup after a test). */
export async function removeContainer(name: string): Promise<void> {
  await run('podman', ['rm', '--force', '--ignore', '--time', '0', name], { env }).catch(() => undefined);
}

/**
 * The options every test container runs with: the root filesystem read-only, the numeric non-root user, no
 * capabilities, a tmpfs at /tmp and `dataDir` (a host folder owned by that user) as the /data volume.
 */
export function lockedDown(user: string, dataDir: string): string[] {
  return ['--read-only', '--user', user, '--cap-drop', 'ALL', '--tmpfs', '/tmp', '--volume', `${dataDir}:/data`];
}
