import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import YAML from 'yaml';
import type { CustomResourceDefinition } from '../operator/api/crd.js';
import { manifestProblems } from '../operator/api/crd-validation.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The committed CRDs (what `kubectl apply -f crds/` installs). */
async function committedCrds(): Promise<CustomResourceDefinition[]> {
  const files = (await readdir(here)).filter((f) => f.endsWith('.yaml'));
  return Promise.all(files.map(async (f) => YAML.parse(await readFile(path.join(here, f), 'utf8'))));
}

describe('crds/samples', () => {
  it('name no namespace (kubectl apply -n <any> takes them) and are valid against the committed CRD', async () => {
    const crds = await committedCrds();
    const files = (await readdir(path.join(here, 'samples'))).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBe(crds.length);
    for (const file of files) {
      const sample = YAML.parse(await readFile(path.join(here, 'samples', file), 'utf8'));
      expect({ file, namespace: sample.metadata?.namespace }).toEqual({ file, namespace: undefined });
      const crd = crds.find((c) => c.spec.names.kind === sample.kind);
      expect({ file, problems: crd ? manifestProblems(crd, sample) : ['no CRD of this kind'] }).toEqual({
        file,
        problems: [],
      });
    }
  });
});

describe('crds/README.md', () => {
  it('names each kind with the short names its CRD declares (kubectl get <short name> works)', async () => {
    const readme = await readFile(path.join(here, 'README.md'), 'utf8');
    const crds = await committedCrds();
    // "`IngestJob` (`ij`)": a kind in backticks, then its short name in backticks and parentheses.
    const named = [...readme.matchAll(/`([A-Z][A-Za-z]+)` \(`([a-z]+)`\)/g)].map(([, kind, short]) => ({
      kind,
      short,
    }));
    expect(named.map((n) => n.kind).sort()).toEqual(crds.map((c) => c.spec.names.kind).sort());
    for (const { kind, short } of named) {
      const crd = crds.find((c) => c.spec.names.kind === kind);
      expect({ kind, short, declared: crd?.spec.names.shortNames?.includes(short) }).toEqual({
        kind,
        short,
        declared: true,
      });
    }
  });
});
