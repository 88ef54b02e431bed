import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  credentialKeyFile,
  CredentialSealer,
  openCredentialSealer,
  splitPassword,
  UnsealError,
  withPassword,
} from './stream-credentials.js';

const KEY = 'a key of at least thirty-two characters';

describe('CredentialSealer', () => {
  it('opens what it sealed for the same URL only, and only with the same key', () => {
    const sealer = new CredentialSealer(KEY);
    const sealed = sealer.seal('p@ss:wörd', 'rtsp://cam@10.0.0.7/s1');
    expect(sealed).toMatch(/^v1:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('p@ss');
    expect(sealer.seal('p@ss:wörd', 'rtsp://cam@10.0.0.7/s1')).not.toBe(sealed); // a fresh IV each time
    expect(new CredentialSealer(KEY).open(sealed, 'rtsp://cam@10.0.0.7/s1')).toBe('p@ss:wörd');
    // Pointed at another host, or opened with another key, it stays shut.
    expect(() => sealer.open(sealed, 'rtsp://cam@attacker.example/s1')).toThrow(UnsealError);
    expect(() => new CredentialSealer(`${KEY}!`).open(sealed, 'rtsp://cam@10.0.0.7/s1')).toThrow(UnsealError);
    expect(() => sealer.open('v1:AAAA', 'rtsp://cam@10.0.0.7/s1')).toThrow(UnsealError);
  });
});

describe('splitPassword / withPassword', () => {
  it('takes the password out of an RTSP URL, keeping the user name, and puts it back', () => {
    expect(splitPassword('rtsp://cam:p%40ss@10.0.0.7:8554/s1?x=1')).toEqual({
      url: 'rtsp://cam@10.0.0.7:8554/s1?x=1',
      password: 'p@ss',
    });
    expect(splitPassword('rtsp://10.0.0.7/s1')).toEqual({ url: 'rtsp://10.0.0.7/s1' });
    expect(splitPassword('clips/door.mp4')).toEqual({ url: 'clips/door.mp4' });
    expect(withPassword('rtsp://cam@10.0.0.7:8554/s1?x=1', 'p@ss')).toBe('rtsp://cam:p%40ss@10.0.0.7:8554/s1?x=1');
  });
});

describe('openCredentialSealer', () => {
  it('uses the configured key; embedded, makes a key file (0600) once and reads it after; a worker makes none', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'caption-runs-key-'));
    try {
      const configured = (await openCredentialSealer({ secret: KEY, dataDir, create: true }))!;
      expect(new CredentialSealer(KEY).open(configured.seal('pw', 'rtsp://h/s'), 'rtsp://h/s')).toBe('pw');
      expect(await openCredentialSealer({ dataDir, create: false })).toBeUndefined();
      const made = (await openCredentialSealer({ dataDir, create: true }))!;
      const file = credentialKeyFile(dataDir);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const key = await readFile(file, 'utf8');
      const again = (await openCredentialSealer({ dataDir, create: true }))!;
      expect(await readFile(file, 'utf8')).toBe(key);
      expect(again.open(made.seal('pw', 'rtsp://h/s'), 'rtsp://h/s')).toBe('pw');
      expect(
        (await openCredentialSealer({ dataDir, create: false }))!.open(made.seal('pw', 'rtsp://h/s'), 'rtsp://h/s'),
      ).toBe('pw');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
