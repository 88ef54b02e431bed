import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Reads the 80 COCO labels in output-class order from @vladmandic/human's `src/object/labels.ts`
 * (`{ class: N, label: '...' }` entries), so the detector's class indices keep the package's meaning.
 */
export async function readCocoLabels(humanPackageDir: string): Promise<string[]> {
  const source = await readFile(path.join(humanPackageDir, 'src/object/labels.ts'), 'utf8');
  const entries = [...source.matchAll(/class:\s*(\d+)\s*,\s*label:\s*'([^']+)'/g)].map((m) => ({
    index: Number(m[1]),
    label: m[2],
  }));
  entries.sort((a, b) => a.index - b.index);
  if (entries.length !== 80) throw new Error(`expected 80 COCO labels in human's labels.ts, found ${entries.length}`);
  return entries.map((e) => e.label);
}
