import { describe, expect, it } from '@jest/globals';
import { frameSourceArgs, redactSecrets } from './frame-source.js';

const rtsp = (url: string) => ({ kind: 'rtsp' as const, url: new URL(url) });
const base = { ioTimeoutMs: 5000, idleTimeoutMs: 1000, queueFrames: 2, maxFrameBytes: 1024 };

describe('frameSourceArgs', () => {
  it('reads RTSP over TCP with the I/O time-out, samples and scales, and writes MJPEG to stdout, one argument each', () => {
    const args = frameSourceArgs({ ...base, source: rtsp('rtsp://cam.lan/live; rm -rf /'), frameRate: 2, width: 640 });
    expect(args.slice(args.indexOf('-rtsp_transport'), args.indexOf('-i') + 2)).toEqual([
      '-rtsp_transport',
      'tcp',
      '-stimeout',
      '5000000',
      '-i',
      'rtsp://cam.lan/live;%20rm%20-rf%20/',
    ]);
    expect(args.slice(args.indexOf('-vf'), args.indexOf('-vf') + 2)).toEqual(['-vf', 'fps=2,scale=640:-2']);
    expect(args.slice(-7)).toEqual(['-f', 'image2pipe', '-c:v', 'mjpeg', '-q:v', '4', 'pipe:1']);
  });

  it('keeps every frame at frame rate 0 and loops a file in real time', () => {
    const args = frameSourceArgs({ ...base, source: { kind: 'file', path: '/media/demo.mp4' }, frameRate: 0 });
    expect(args).not.toContain('-vf');
    expect(args.slice(args.indexOf('-re'), args.indexOf('-i') + 2)).toEqual([
      '-re',
      '-stream_loop',
      '-1',
      '-i',
      '/media/demo.mp4',
    ]);
  });
});

describe('redactSecrets', () => {
  it('hides the RTSP password in ffmpeg’s messages, as written and URL-encoded', () => {
    const source = rtsp('rtsp://admin:p%40ss@cam.lan/live');
    expect(redactSecrets('rtsp://admin:p%40ss@cam.lan/live: 401 Unauthorized (p@ss)', source)).toBe(
      'rtsp://admin:***@cam.lan/live: 401 Unauthorized (***)',
    );
    expect(redactSecrets('no secret here', rtsp('rtsp://cam.lan/live'))).toBe('no secret here');
  });
});
