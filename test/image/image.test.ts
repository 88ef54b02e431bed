/**
 * The container image (root Dockerfile) builds with podman from bases made on this machine (hack/image/build.sh) and
 * runs each role read-only as uid 10001 with a tmpfs at /tmp and a volume at /data: `operator --help`,
 * `serve dataprep` (no network at all: health, one photo and one video ingested with the models baked into the image,
 * then SIGTERM) and `serve alert-dispatch` (host network: health from here, then SIGTERM). Prints the image size, the
 * build time and the start-to-healthy times. Skipped, saying why, where podman cannot run.
 */
import { execFile } from 'node:child_process';
import { chown, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bundledFfmpegPaths } from '../../services/lib/media/index.js';
import { REPO_ROOT } from '../support/argus-process.js';
import {
  buildImage,
  containerLogs,
  containerState,
  inspectImage,
  lockedDown,
  podman,
  podmanUnavailable,
  removeContainer,
  startToListening,
  type ImageFacts,
} from './testing/podman.js';
import { freeLoopbackPort } from '../support/free-port.js';

const run = promisify(execFile);
const IMAGE = 'localhost/argus:image-test';
const USER = '10001:10001';
/** Shutdown grace given to the services; podman's stop waits longer before SIGKILL (exit 137). */
const GRACE_SECONDS = 10;
const STOP_TIMEOUT_SECONDS = GRACE_SECONDS + 10;
const BUILD_TIMEOUT_MS = 40 * 60_000;

const unavailable = podmanUnavailable();
if (unavailable) console.warn(`container image tests skipped: ${unavailable}`);
const describeWithPodman = unavailable ? describe.skip : describe;

/** Polls `healthy` until it answers true; resolves to the milliseconds since `since`. Bounded: 600 tries. */
async function untilHealthy(since: number, healthy: () => Promise<boolean>): Promise<number> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (await healthy()) return performance.now() - since;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('never healthy');
}

/** Stops a container with SIGTERM (SIGKILL only after STOP_TIMEOUT_SECONDS) and returns its exit code and logs. */
async function stopGracefully(name: string): Promise<{ exitCode: number; logs: string }> {
  await podman(['stop', '--time', String(STOP_TIMEOUT_SECONDS), name]);
  const state = await containerState(name);
  return { exitCode: state.ExitCode, logs: await containerLogs(name) };
}

describeWithPodman('container image', () => {
  let work: string;
  let dataDir: string;
  let probeDir: string;
  let image: ImageFacts;
  const figures: string[] = [];

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'argus-image-'));
    // The /data volume: a host folder owned by the image's user, as a volume provisioner would hand it over.
    dataDir = path.join(work, 'data');
    await mkdir(dataDir);
    await chown(dataDir, 10001, 10001);
    // What the no-network container reads: a photo, a 2 s video made here with the bundled ffmpeg, the probe script.
    probeDir = path.join(work, 'probe');
    await mkdir(probeDir);
    await copyFile(path.join(REPO_ROOT, 'test/fixtures/images/coffee.png'), path.join(probeDir, 'coffee.png'));
    await copyFile(path.join(REPO_ROOT, 'test/image/testing/probe.mjs'), path.join(probeDir, 'probe.mjs'));
    const video = ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=2:size=320x240:rate=10'];
    await run(bundledFfmpegPaths().ffmpeg, [...video, '-pix_fmt', 'yuv420p', path.join(probeDir, 'clip.mp4')]);

    const started = performance.now();
    await buildImage(IMAGE);
    figures.push(
      `build (bases present or made, layers cached or not): ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    image = await inspectImage(IMAGE);
    figures.push(`image size: ${(image.Size / 1e6).toFixed(0)} MB`);
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    if (figures.length > 0) console.log(`container image figures:\n  ${figures.join('\n  ')}`);
    await Promise.all(['argus-image-dataprep', 'argus-image-dispatch'].map(removeContainer));
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('runs argus as uid 10001 with its OCI labels, services listening on every interface', () => {
    expect(image.Config.User).toBe(USER);
    expect(image.Config.Entrypoint).toEqual(['argus']);
    expect(image.Config.Labels['org.opencontainers.image.version']).toMatch(/^\d+\.\d+\.\d+/);
    expect(image.Config.Labels['org.opencontainers.image.revision']).toMatch(/^[0-9a-f]{40}$|^unknown$/);
    expect(image.Config.Labels['org.opencontainers.image.source']).toBeTruthy();
    expect(image.Config.Env).toEqual(
      expect.arrayContaining(['MM_DATAPREP_HOST=0.0.0.0', 'ALERT_DISPATCH_HOST=0.0.0.0']),
    );
  });

  it('answers operator --help read-only as the non-root user', async () => {
    const output = await podman([
      'run',
      '--rm',
      ...lockedDown(USER, dataDir),
      '--network',
      'none',
      IMAGE,
      'operator',
      '--help',
    ]);
    expect(output).toContain('usage: argus <command>');
  });

  it(
    'serves dataprep with no network: healthy, a photo and a video ingested with the baked-in models, stopped by SIGTERM',
    async () => {
      const name = 'argus-image-dataprep';
      await removeContainer(name);
      const started = performance.now();
      await podman([
        'run',
        '--detach',
        '--name',
        name,
        ...lockedDown(USER, dataDir),
        '--network',
        'none',
        '--volume',
        `${probeDir}:/probe:ro`,
        '--env',
        `ARGUS_SHUTDOWN_GRACE_SECONDS=${GRACE_SECONDS}`,
        IMAGE,
        'serve',
        'dataprep',
      ]);
      const probe = (args: string[]) => podman(['exec', name, 'node', '/probe/probe.mjs', ...args]);
      const healthyAfter = await untilHealthy(started, () =>
        probe(['health', '6007']).then(
          () => true,
          () => false,
        ),
      );
      figures.push(
        `dataprep start to healthy (podman run to the first 200, polled by podman exec): ${healthyAfter.toFixed(0)} ms`,
        `dataprep process start to listening (its own log): ${await startToListening(name, 'dataprep')} ms`,
      );

      for (const file of ['coffee.png', 'clip.mp4']) {
        const answer = JSON.parse(await probe(['upload', '6007', `/probe/${file}`]));
        expect(answer).toMatchObject({ status: 201, body: { status: 'success', bucket_name: 'image-test' } });
        expect(answer.body.message).toMatch(/\d+ embeddings? created/);
      }

      const { exitCode, logs } = await stopGracefully(name);
      // 0: stopped by its own SIGTERM handler within the grace (podman's SIGKILL after the timeout would give 137).
      expect(exitCode).toBe(0);
      expect(logs).toContain('"signal":"SIGTERM"');
      // The models came from the image: none was imported again (an import would fail on the read-only filesystem).
      expect(logs).not.toMatch(/imported in \d+ ms/);
      expect(logs).toContain('"url":"http://0.0.0.0:6007"');
    },
    5 * 60_000,
  );

  it(
    'serves alert-dispatch on the host network: healthy from outside the container, stopped by SIGTERM',
    async () => {
      const name = 'argus-image-dispatch';
      await removeContainer(name);
      const port = await freeLoopbackPort();
      const started = performance.now();
      await podman([
        'run',
        '--detach',
        '--name',
        name,
        ...lockedDown(USER, dataDir),
        '--network',
        'host',
        '--env',
        `ALERT_DISPATCH_PORT=${port}`,
        '--env',
        `ARGUS_SHUTDOWN_GRACE_SECONDS=${GRACE_SECONDS}`,
        IMAGE,
        'serve',
        'alert-dispatch',
      ]);
      const health = `http://127.0.0.1:${port}/api/v1/health`;
      const healthyAfter = await untilHealthy(started, () =>
        fetch(health).then(
          (r) => r.ok,
          () => false,
        ),
      );
      figures.push(
        `alert-dispatch start to healthy (podman run to the first 200, polled from the host): ${healthyAfter.toFixed(0)} ms`,
        `alert-dispatch process start to listening (its own log): ${await startToListening(name, 'alert-dispatch')} ms`,
      );

      const { exitCode, logs } = await stopGracefully(name);
      expect(exitCode).toBe(0);
      expect(logs).toContain('"signal":"SIGTERM"');
    },
    5 * 60_000,
  );
});
