import zlib from 'node:zlib';

const MIB = 1024 * 1024;

let bomb: Buffer | undefined;

/** About 1 MiB of gzip (16 members of 64 MiB of zeros) that inflates to 1 GiB; built once. */
export function gzipBomb(): Buffer {
  if (!bomb) {
    const member = zlib.gzipSync(Buffer.alloc(64 * MIB), { level: 9 });
    bomb = Buffer.concat(Array.from({ length: 16 }, () => member));
  }
  return bomb;
}

/** A JSON object nested `depth` levels deep. */
export const nestedJson = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
