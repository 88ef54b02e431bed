/**
 * `npm run bench [name…]`: runs every `bench/*.bench.ts` (or the named ones) one after another and prints their
 * figures. Each benchmark measures its own baseline in the same run and reports ratios against it.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = (await readdir(dir)).filter((f) => f.endsWith('.bench.ts')).sort();
for (const file of files) {
  const name = file.replace(/\.bench\.ts$/, '');
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  console.log(`\n=== ${name} ===`);
  const mod = await import(pathToFileURL(path.join(dir, file)).href);
  await mod.default();
}
