import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundledFfmpegPaths } from '../../services/lib/media/ffmpeg-paths.js';

export { FIXTURE_IMAGES_DIR, fixtureImage } from './fixtures.js';

/** How makeTestVideo renders its content. */
export interface TestVideoOptions {
  seconds: number;
  fps: number;
  width: number;
  height: number;
  /** `testsrc` (synthetic pattern) or the path of a photo, panned slowly so consecutive frames differ. */
  source?: 'testsrc' | string;
  /** Target video bitrate such as `50M` (large files); default: x264 CRF 23. */
  bitrate?: string;
  /** Adds temporal noise (makes high bitrates real data instead of padding). */
  noise?: boolean;
  /** Keep the file in this directory across processes (benchmarks) instead of the per-process temp dir. */
  cacheDir?: string;
}

let cacheDir: Promise<string> | undefined;

/** Per-process temp dir for generated media; removed with removeTestMediaCache() or left for the OS. */
export function testMediaDir(): Promise<string> {
  cacheDir ??= mkdtemp(path.join(os.tmpdir(), `argus-media-${process.pid}-`));
  return cacheDir;
}

/** Removes the per-process media cache (call from a global teardown or a bench). */
export async function removeTestMediaCache(): Promise<void> {
  if (!cacheDir) return;
  const dir = await cacheDir;
  cacheDir = undefined;
  await rm(dir, { recursive: true, force: true });
}

/** Runs the bundled ffmpeg; rejects with its stderr tail on failure. */
export function runFfmpeg(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      bundledFfmpegPaths().ffmpeg,
      ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}: ${stderr}`))));
  });
}

const pending = new Map<string, Promise<string>>();

async function cached(
  key: string,
  ext: string,
  make: (file: string) => Promise<void>,
  persistentDir?: string,
): Promise<string> {
  const name = `${createHash('sha1').update(key).digest('hex').slice(0, 16)}.${ext}`;
  let job = pending.get(name);
  if (!job) {
    job = (async () => {
      const dir = persistentDir ?? (await testMediaDir());
      const file = path.join(dir, name);
      if (persistentDir && existsSync(file)) return file;
      await mkdir(dir, { recursive: true });
      const partial = `${file}.part.${ext}`;
      await make(partial);
      await rm(file, { force: true });
      await import('node:fs/promises').then((fs) => fs.rename(partial, file));
      return file;
    })();
    pending.set(name, job);
    job.catch(() => pending.delete(name));
  }
  return job;
}

/**
 * A small H.264 MP4 (yuv420p, faststart) with exactly seconds×fps frames. With a photo as source the photo is
 * scaled to cover the frame and panned, so a detector still finds its objects in every frame. Cached per process.
 */
export function makeTestVideo(options: TestVideoOptions): Promise<string> {
  const { seconds, fps, width, height } = options;
  const source = options.source ?? 'testsrc';
  const { cacheDir: persistentDir, ...content } = options;
  return cached(
    JSON.stringify(content),
    'mp4',
    async (file) => {
      const input =
        source === 'testsrc'
          ? ['-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=${fps}`]
          : ['-loop', '1', '-framerate', String(fps), '-i', source];
      const filters =
        source === 'testsrc'
          ? []
          : [
              // Cover a frame 10% larger than the output, then pan across the spare margin over time.
              `scale=${Math.ceil(width * 1.1)}:${Math.ceil(height * 1.1)}:force_original_aspect_ratio=increase`,
              `crop=${width}:${height}:x='(iw-ow)/2*(1+sin(t))':y='(ih-oh)/2*(1+cos(t/2))'`,
            ];
      if (options.noise) filters.push('noise=alls=25:allf=t');
      filters.push('format=yuv420p');
      const rate = options.bitrate
        ? ['-b:v', options.bitrate, '-maxrate', options.bitrate, '-bufsize', options.bitrate]
        : ['-crf', '23'];
      await runFfmpeg([
        ...input,
        '-frames:v',
        String(Math.round(seconds * fps)),
        '-vf',
        filters.join(','),
        '-r',
        String(fps),
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        ...rate,
        '-g',
        String(fps * 2),
        '-movflags',
        '+faststart',
        file,
      ]);
    },
    persistentDir,
  );
}

/** A file that starts like an MP4 (valid `ftyp` box, so type detection says mp4) but holds garbage after it. */
export function makeCorruptMp4(): Promise<string> {
  return cached('corrupt-mp4', 'mp4', async (file) => {
    const ftyp = Buffer.alloc(24);
    ftyp.writeUInt32BE(24, 0);
    ftyp.write('ftypisom', 4, 'latin1');
    ftyp.writeUInt32BE(0x200, 12);
    ftyp.write('isomiso2', 16, 'latin1');
    const garbage = createHash('sha512').update('garbage').digest();
    const body = Buffer.concat(Array.from({ length: 256 }, () => garbage));
    await writeFile(file, Buffer.concat([ftyp, body]));
  });
}

/** The first half of a valid MP4 whose index (moov) sits at the end, so the file cannot be opened. */
export function makeTruncatedMp4(): Promise<string> {
  return cached('truncated-mp4', 'mp4', async (file) => {
    const whole = path.join(await testMediaDir(), 'truncated-source.mp4');
    await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '2', '-c:v', 'libx264', whole]);
    const bytes = await readFile(whole);
    await writeFile(file, bytes.subarray(0, Math.floor(bytes.length / 2)));
  });
}

/** Writes arbitrary bytes under the cache dir with the given file name (e.g. a PNG named `.jpg`, a text file). */
export async function writeTestFile(name: string, content: Uint8Array | string): Promise<string> {
  const dir = path.join(await testMediaDir(), 'files');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, name);
  await writeFile(file, content);
  return file;
}
