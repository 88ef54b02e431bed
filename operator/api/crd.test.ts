import { describe, expect, it } from '@jest/globals';
import { Type, type TSchema } from '@sinclair/typebox';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CustomResourceDefinition as CrdModel } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import YAML from 'yaml';
import {
  toCustomResourceDefinition,
  toStructuralSchema,
  type CustomResourceDefinition,
  type JSONSchemaProps,
} from './crd.js';
import { crdManifests } from './crd-manifests.js';
import { manifestProblems, structuralProblems, valueProblems } from './crd-validation.js';
import {
  API_VERSION,
  CATEGORY,
  GROUP,
  INGEST_MAX_ITEMS,
  RESOURCES,
  schemaProblems,
  VERSION,
  type KindName,
} from './index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KINDS = Object.keys(RESOURCES) as KindName[];
// The only field of any kind that keeps unknown fields: the user's own metadata of an IngestJob.
const FREE_FORM: Record<KindName, string[]> = {
  IngestJob: ['spec.metadata'],
  CameraWatcher: [],
  CaptionRun: [],
  CameraRule: [],
};

const committedCrd = async (kind: KindName, dir = 'crds'): Promise<string> =>
  readFile(path.join(repoRoot, dir, `${RESOURCES[kind].plural}.${GROUP}.yaml`), 'utf8');
const schemaOf = (crd: CustomResourceDefinition): JSONSchemaProps => crd.spec.versions[0].schema.openAPIV3Schema;
const sample = async (kind: KindName): Promise<Record<string, any>> =>
  YAML.parse(await readFile(path.join(repoRoot, 'crds/samples', `${kind.toLowerCase()}.yaml`), 'utf8'));

/** Both judges of a manifest: the TypeBox schema (embedded store) and the committed CRD YAML (API server). */
async function bothProblems(kind: KindName, manifest: Record<string, any>) {
  const crd = YAML.parse(await committedCrd(kind)) as CustomResourceDefinition;
  return {
    typebox: [
      ...schemaProblems(kind, 'spec', manifest.spec),
      ...(manifest.status === undefined ? [] : schemaProblems(kind, 'status', manifest.status)),
    ],
    crd: manifestProblems(crd, manifest),
  };
}

function schemaAt(root: JSONSchemaProps, jsonPath: string): JSONSchemaProps | undefined {
  let node: JSONSchemaProps | undefined = root;
  for (const part of jsonPath.replace(/^\./, '').split('.')) node = node?.properties?.[part];
  return node;
}

function preservedPaths(node: JSONSchemaProps, at = ''): string[] {
  const own = node['x-kubernetes-preserve-unknown-fields'] ? [at] : [];
  const children = Object.entries(node.properties ?? {}).flatMap(([k, v]) => preservedPaths(v, at ? `${at}.${k}` : k));
  return [...own, ...children, ...(node.items ? preservedPaths(node.items, `${at}[]`) : [])];
}

describe.each(KINDS)('the %s CRD', (kind) => {
  const def = RESOURCES[kind];
  const crd = toCustomResourceDefinition(def);
  const schema = schemaOf(crd);

  it('is a namespaced v1 CRD of argus.dev with one served+stored version, a status subresource, names and category', () => {
    expect(crd.metadata.name).toBe(`${def.plural}.${GROUP}`);
    expect(crd.spec).toMatchObject({
      group: GROUP,
      scope: 'Namespaced',
      names: { kind, plural: def.plural, singular: def.singular, listKind: def.listKind, shortNames: def.shortNames },
    });
    expect(crd.spec.names.categories).toEqual([CATEGORY]);
    expect(crd.spec.versions).toHaveLength(1);
    expect(crd.spec.versions[0]).toMatchObject({
      name: VERSION,
      served: true,
      storage: true,
      subresources: { status: {} },
    });
    // Field names and types of apiextensions.k8s.io/v1 as the Kubernetes OpenAPI schema has them (kubernetes-models).
    expect(() => new CrdModel(JSON.parse(JSON.stringify(crd))).validate()).not.toThrow();
  });

  it('has a structural openAPIV3Schema with a description on every node', () => {
    expect(structuralProblems(schema, FREE_FORM[kind])).toEqual([]);
    expect(preservedPaths(schema)).toEqual(FREE_FORM[kind]);
    expect(schema.required).toEqual(['spec']);
  });

  it('has printer columns whose JSONPaths name fields of the schema with the column type', () => {
    const columnType = { string: 'string', integer: 'integer', number: 'number', boolean: 'boolean', date: 'string' };
    for (const column of crd.spec.versions[0].additionalPrinterColumns) {
      if (column.jsonPath === '.metadata.creationTimestamp') continue; // ObjectMeta: owned by the API server
      const field = schemaAt(schema, column.jsonPath);
      expect({ column: column.name, type: field?.type }).toEqual({
        column: column.name,
        type: columnType[column.type as keyof typeof columnType],
      });
      expect(column.description).not.toBe('');
    }
    expect(crd.spec.versions[0].additionalPrinterColumns.at(-1)).toMatchObject({ name: 'Age', type: 'date' });
  });

  it('is committed as the generator writes it, in crds/ and in the chart', async () => {
    const manifest = crdManifests().find((m) => m.crd.spec.names.kind === kind)!;
    expect(await committedCrd(kind)).toBe(manifest.yaml);
    expect(await committedCrd(kind, 'charts/argus/files/crds')).toBe(manifest.yaml);
    expect(YAML.parse(manifest.yaml)).toEqual(JSON.parse(JSON.stringify(crd)));
    expect(crdManifests().find((m) => m.crd.spec.names.kind === kind)!.yaml).toBe(manifest.yaml);
  });

  it('has a sample in crds/samples that both the TypeBox schema and the committed CRD accept', async () => {
    const manifest = await sample(kind);
    expect(manifest).toMatchObject({ apiVersion: API_VERSION, kind });
    expect(await bothProblems(kind, manifest)).toEqual({ typebox: [], crd: [] });
  });
});

describe('crds/', () => {
  it('holds exactly one CRD per kind and one sample per kind', async () => {
    const yamls = (await readdir(path.join(repoRoot, 'crds'))).filter((f) => f.endsWith('.yaml')).sort();
    expect(yamls).toEqual(KINDS.map((k) => `${RESOURCES[k].plural}.${GROUP}.yaml`).sort());
    const samples = (await readdir(path.join(repoRoot, 'crds/samples'))).sort();
    expect(samples).toEqual(KINDS.map((k) => `${k.toLowerCase()}.yaml`).sort());
  });
});

describe('an IngestJob manifest is refused like kubectl apply refuses it', () => {
  const cases: [string, (job: Record<string, any>) => void, RegExp][] = [
    ['an unknown spec field', (j) => (j.spec.frameIntervall = 15), /frameIntervall/],
    ['an unknown field in an item', (j) => (j.spec.items[0].sha256 = 'abc'), /sha256/],
    ['an unknown top-level field', (j) => (j.extra = true), /extra/],
    ['a frame interval of 0', (j) => (j.spec.frameInterval = 0), /frameInterval/],
    ['a confidence above 1', (j) => (j.spec.detection.confidence = 1.5), /confidence/],
    ['a source outside the enum', (j) => (j.spec.source = 'ftp'), /source/],
    ['a fractional frame interval', (j) => (j.spec.frameInterval = 1.5), /frameInterval/],
    ['no items', (j) => (j.spec.items = []), /items/],
    ['one item too many', (j) => (j.spec.items = manyItems(INGEST_MAX_ITEMS + 1)), /items/],
    ['a missing required field', (j) => delete j.spec.bucket, /bucket/],
    ['a string where a boolean goes', (j) => (j.spec.storeCopy = 'false'), /storeCopy/],
    ['an unknown status field', (j) => (j.status = { state: 'running', eta: '5m' }), /eta/],
    ['an item message over the bound', (j) => (j.status = { items: [result(0, 'x'.repeat(513))] }), /message/],
  ];

  it.each(cases)('%s', async (_name, change, field) => {
    const job = await sample('IngestJob');
    change(job);
    const { typebox, crd } = await bothProblems('IngestJob', job);
    expect(crd.join('\n')).toMatch(field);
    if (job.extra === undefined) expect(typebox.join('\n')).toMatch(field); // TypeBox sees spec and status only
  });

  it('accepts the largest job and a full status, with user metadata kept as written', async () => {
    const job = await sample('IngestJob');
    job.spec.items = manyItems(INGEST_MAX_ITEMS);
    job.spec.metadata = { anything: { nested: [1, 'two'] } };
    job.status = {
      state: 'completed_with_errors',
      total: 2,
      completed: 1,
      failed: 1,
      skipped: 0,
      progress: '2/2',
      items: [result(0), result(1, 'decode failed: moov atom not found')],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'CompletedWithErrors',
          message: '1 of 2 items failed',
          lastTransitionTime: '2026-11-20T03:04:05Z',
          observedGeneration: 1,
        },
      ],
      observedGeneration: 1,
      startTime: '2026-11-20T03:00:00.123Z',
      completionTime: '2026-11-20T03:04:05+00:00',
    };
    expect(await bothProblems('IngestJob', job)).toEqual({ typebox: [], crd: [] });
  });

  it('refuses what only the API server checks: two results for one index, a bad name, a bad timestamp', async () => {
    const job = await sample('IngestJob');
    job.metadata.name = 'Not_A_DNS_Name';
    job.status = { items: [result(0), result(0)], startTime: 'yesterday' };
    const { typebox, crd } = await bothProblems('IngestJob', job);
    expect(typebox).toEqual(["status.startTime: Expected string to match 'date-time' format"]);
    expect(crd).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^metadata\.name: does not match/),
        expect.stringMatching(/^status\.items: duplicate entries/),
        expect.stringMatching(/^status\.startTime: not an RFC 3339/),
      ]),
    );
  });
});

describe('the structural-schema checker', () => {
  it('names every rule a non-structural schema breaks', () => {
    const bad = {
      type: 'object',
      description: 'Root.',
      properties: {
        metadata: { type: 'object', description: 'Described metadata is refused.' },
        spec: {
          description: 'Spec.',
          type: 'object',
          additionalProperties: false,
          properties: {
            untyped: { description: 'No type.' },
            undocumented: { type: 'string' },
            list: { description: 'No items.', type: 'array' },
            both: {
              description: 'Properties and additionalProperties.',
              type: 'object',
              properties: { a: { description: 'A.', type: 'string' } },
              additionalProperties: { description: 'B.', type: 'string' },
            },
            loose: { description: 'Free.', type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            union: { description: 'A junctor.', type: 'string', anyOf: [{ const: 'a' }] },
            empty: { description: 'Prunes everything.', type: 'object' },
            lookahead: { description: 'Not RE2.', type: 'string', pattern: '^(?!x)' },
          },
        },
      },
    } as unknown as JSONSchemaProps;
    expect(structuralProblems(bad)).toEqual([
      'metadata: the root metadata may only be { type: object } (the API server owns its schema)',
      'spec: additionalProperties: false (pruning does that job)',
      'spec.untyped: no type',
      'spec.undocumented: no description',
      'spec.list: an array without items',
      'spec.both: both properties and additionalProperties',
      'spec.loose: x-kubernetes-preserve-unknown-fields outside free-form metadata',
      'spec.union: anyOf is not allowed in a structural schema',
      'spec.empty: an object with neither properties nor additionalProperties prunes everything',
      "spec.lookahead: pattern ^(?!x) uses lookaround or a back-reference (the API server's RE2 has neither)",
    ]);
  });

  it('checks list-map keys: scalar and required', () => {
    const list: JSONSchemaProps = {
      description: 'Results.',
      type: 'array',
      items: { description: 'One.', type: 'object', properties: { index: { description: 'I.', type: 'integer' } } },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['index'],
    };
    const root: JSONSchemaProps = { description: 'R.', type: 'object', properties: { status: list } };
    expect(structuralProblems(root)).toEqual(['status: map key index must be required or defaulted']);
  });

  it('validates values against a schema node by node', () => {
    const node: JSONSchemaProps = { description: 'N.', type: 'integer', minimum: 1 };
    expect(valueProblems(node, 0)).toEqual(['<root>: 0 is below the minimum 1']);
    expect(valueProblems(node, '1')).toEqual(['<root>: expected integer, got string']);
  });
});

describe('the generator', () => {
  it('turns a union of string literals into type string + enum and drops additionalProperties: false', () => {
    const schema = Type.Object(
      { mode: Type.Union([Type.Literal('a'), Type.Literal('b')], { description: 'Mode.' }) },
      { description: 'Obj.', additionalProperties: false },
    );
    expect(toStructuralSchema(schema, 'spec')).toEqual({
      description: 'Obj.',
      type: 'object',
      properties: { mode: { description: 'Mode.', type: 'string', enum: ['a', 'b'] } },
      required: ['mode'],
    });
  });

  it.each<[string, TSchema, RegExp]>([
    ['a union of numbers', Type.Union([Type.Literal(1), Type.Literal(2)]), /spec: only unions of string literals/],
    [
      'a record (patternProperties)',
      Type.Record(Type.String(), Type.String()),
      /spec: a CRD cannot express patternProperties/,
    ],
    [
      'a nested tuple',
      Type.Object({ pair: Type.Tuple([Type.String(), Type.String()]) }),
      /spec\.pair: a CRD cannot express/,
    ],
    ['an open object', Type.Object({}, { additionalProperties: true }), /needs x-kubernetes-preserve-unknown-fields/],
  ])('refuses %s, naming the path', (_name, schema, message) => {
    expect(() => toStructuralSchema(schema, 'spec')).toThrow(message);
  });
});

function manyItems(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    identifier: `clip-${i}.mp4`,
    videoId: `v-${i}`,
    path: `clips/${i}.mp4`,
  }));
}

function result(index: number, message?: string) {
  return message === undefined
    ? { index, identifier: `clip-${index}.mp4`, videoId: `v-${index}`, status: 'success', embeddingsCount: 12 }
    : { index, identifier: `clip-${index}.mp4`, videoId: `v-${index}`, status: 'error', message };
}
