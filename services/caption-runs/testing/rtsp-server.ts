import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort } from '../../../test/support/free-port.js';
import { killProcess } from '../../../test/support/kill-process.js';

/** Debian's python, which has `gi` (the `python3` first on PATH on these machines may be another build without it). */
const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'rtsp_server.py');

/**
 * Why the GStreamer RTSP server cannot run here (undefined when it can): Debian's gir1.2-gst-rtsp-server-1.0,
 * python3-gi and the GStreamer plugins are needed (`.ci/run` installs them).
 */
export function rtspServerUnavailable(): string | undefined {
  const probe = spawnSync(
    PYTHON,
    ['-c', "import gi; gi.require_version('GstRtspServer', '1.0'); from gi.repository import GstRtspServer"],
    { encoding: 'utf8' },
  );
  if (probe.error || probe.status !== 0) {
    return `the GStreamer RTSP server cannot run (${PYTHON} with gi and GstRtspServer 1.0 is needed: apt-get install gir1.2-gst-rtsp-server-1.0 python3-gi gstreamer1.0-plugins-{base,good,bad,ugly} gstreamer1.0-rtsp gstreamer1.0-libav)`;
  }
  return undefined;
}

/** A GStreamer RTSP server on 127.0.0.1 (a live test pattern, or an MP4's H.264), and a camera reboot. */
export interface RtspServer {
  url: string;
  /** Kills the server (the camera goes away). */
  stop(): Promise<void>;
  /** Starts it again on the same port (the camera is back). */
  start(): Promise<void>;
}

/** The live pattern's size and frame rate (default 320×240 at 10 frames per second). */
export interface PatternOptions {
  width?: number;
  height?: number;
  fps?: number;
}

/** Starts the server and waits for it to listen (its "ready" line). */
export async function startRtspServer(mount = 'cam', file?: string, pattern: PatternOptions = {}): Promise<RtspServer> {
  const port = await freeLoopbackPort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const env = {
      ...process.env,
      ...(pattern.width ? { RTSP_TEST_WIDTH: String(pattern.width) } : {}),
      ...(pattern.height ? { RTSP_TEST_HEIGHT: String(pattern.height) } : {}),
      ...(pattern.fps ? { RTSP_TEST_FPS: String(pattern.fps) } : {}),
    };
    const started = spawn(PYTHON, [SCRIPT, String(port), mount, ...(file ? [file] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    child = started;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      started.stdout!.setEncoding('utf8').on('data', (text: string) => {
        output += text;
        if (output.includes('ready')) resolve();
      });
      started.stderr!.setEncoding('utf8').on('data', (text: string) => (output += text));
      started.once('exit', (code) => reject(new Error(`the RTSP server exited (${code}): ${output}`)));
    });
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    await killProcess(running);
  };
  await start();
  return { url: `rtsp://127.0.0.1:${port}/${mount}`, stop, start };
}
