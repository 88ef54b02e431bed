import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The form of a sealed password: version, then base64url of IV (12 bytes), GCM tag (16 bytes) and ciphertext. */
const SEALED = /^v1:([A-Za-z0-9_-]+)$/;

/** A sealed password could not be opened: another key, or a spec changed since it was sealed. */
export class UnsealError extends Error {}

/**
 * Seals and opens RTSP passwords with AES-256-GCM, so that a CaptionRun holds its stream's password only sealed (who
 * can read CaptionRuns cannot read it). The stream's URL without its password is the additional data: a sealed
 * password opens only for the URL it was sealed with, so editing the run to point at another host cannot send the
 * password there.
 */
export class CredentialSealer {
  private readonly key: Buffer;

  /** `secret`: CAPTION_RUNS_CREDENTIALS_KEY (at least 32 characters), or the key file's random bytes. */
  constructor(secret: string | Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'argus-caption-runs', 'rtsp-credentials', 32));
  }

  seal(password: string, url: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(url));
    const sealed = Buffer.concat([cipher.update(password, 'utf8'), cipher.final()]);
    return `v1:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
  }

  /** The password sealed for `url`; UnsealError when this key did not seal it for this URL. */
  open(sealed: string, url: string): string {
    const match = SEALED.exec(sealed);
    const bytes = match ? Buffer.from(match[1], 'base64url') : Buffer.alloc(0);
    if (bytes.length < 28) throw new UnsealError('the sealed password is malformed');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12))
        .setAAD(Buffer.from(url))
        .setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new UnsealError(
        'the stream password cannot be opened: CAPTION_RUNS_CREDENTIALS_KEY is not the key that sealed it, or rtspUrl changed since',
      );
    }
  }
}

/** An RTSP URL split into what a resource may show (the user name kept) and its password (undefined: none). */
export function splitPassword(rtspUrl: string): { url: string; password?: string } {
  if (!/^rtsps?:/i.test(rtspUrl)) return { url: rtspUrl };
  const url = new URL(rtspUrl);
  if (!url.password) return { url: rtspUrl };
  const password = decodeURIComponent(url.password);
  url.password = '';
  return { url: url.toString(), password };
}

/** `rtspUrl` with `password` put back. */
export function withPassword(rtspUrl: string, password: string): string {
  const url = new URL(rtspUrl);
  url.password = encodeURIComponent(password);
  return url.toString();
}

/** Where the embedded key lives: under the data dir, readable by its owner only. */
export function credentialKeyFile(dataDir: string): string {
  return path.join(dataDir, 'caption-runs', 'credentials.key');
}

/**
 * The sealer of a process: CAPTION_RUNS_CREDENTIALS_KEY when set; else the key file under the data dir, made (32
 * random bytes, mode 0600) when `create` — the embedded service, whose workers run in the same process — and read
 * when it exists otherwise; undefined when there is none (a cluster without the key: passwords are refused).
 */
export async function openCredentialSealer(options: {
  secret?: string;
  dataDir: string;
  create: boolean;
}): Promise<CredentialSealer | undefined> {
  if (options.secret) return new CredentialSealer(options.secret);
  const file = credentialKeyFile(options.dataDir);
  if (options.create) {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      },
    );
  }
  const key = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  return key ? new CredentialSealer(key.trim()) : undefined;
}
