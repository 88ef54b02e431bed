import { isObject } from '../../services/lib/json/index.js';
import type { CustomResourceDefinition, JSONSchemaProps } from './crd.js';

// Every field name apiextensions.k8s.io/v1 JSONSchemaProps accepts that a structural schema may use outside of
// logical junctors (anyOf/allOf/oneOf/not are left out on purpose: Argus schemas never need them).
const ALLOWED_KEYS = new Set([
  'description',
  'type',
  'format',
  'title',
  'enum',
  'default',
  'nullable',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'example',
  'externalDocs',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-validations',
]);
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);
// Formats the API server knows (k8s.io/kube-openapi strfmt); an unknown one is accepted but never checked.
const FORMATS = new Set(['date-time', 'date', 'int32', 'int64', 'float', 'double', 'byte', 'uri', 'hostname', 'uuid']);
// The API server compiles patterns with Go's RE2: no lookahead, lookbehind or back-references.
const RE2_UNSUPPORTED = /\(\?[=!<]|\\[1-9]/;
// RFC 3339 as metav1.Time accepts it: fractional seconds optional, Z or an offset.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * What makes a CRD's `openAPIV3Schema` non-structural or undocumented, as "path: problem" lines (empty when fine).
 * `freeForm` lists the only paths (like `spec.metadata`) allowed to keep unknown fields.
 */
export function structuralProblems(root: JSONSchemaProps, freeForm: readonly string[] = []): string[] {
  const problems: string[] = [];
  const report = (path: string, problem: string) => problems.push(`${path || '<root>'}: ${problem}`);
  if (root.type !== 'object') report('', 'the root must be type: object');
  const metadata = root.properties?.metadata;
  if (metadata !== undefined && JSON.stringify(metadata) !== JSON.stringify({ type: 'object' })) {
    report('metadata', 'the root metadata may only be { type: object } (the API server owns its schema)');
  }
  for (const [name, child] of Object.entries(root.properties ?? {})) {
    if (name !== 'metadata') walk(child, name);
  }
  if (root.description === undefined) report('', 'no description');
  return problems;

  function walk(node: JSONSchemaProps, path: string): void {
    const keys = Object.keys(node);
    for (const key of keys) if (!ALLOWED_KEYS.has(key)) report(path, `${key} is not allowed in a structural schema`);
    if (typeof node.description !== 'string' || node.description.trim() === '') report(path, 'no description');
    if (node.type === undefined) report(path, 'no type');
    else if (!TYPES.has(node.type)) report(path, `unknown type ${node.type}`);
    if (node.format !== undefined && !FORMATS.has(node.format)) report(path, `unknown format ${node.format}`);
    if (node.pattern !== undefined && RE2_UNSUPPORTED.test(node.pattern)) {
      report(path, `pattern ${node.pattern} uses lookaround or a back-reference (the API server's RE2 has neither)`);
    }
    const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
    if (preserve && !freeForm.includes(path))
      report(path, 'x-kubernetes-preserve-unknown-fields outside free-form metadata');
    if ((node as { additionalProperties?: unknown }).additionalProperties === false) {
      report(path, 'additionalProperties: false (pruning does that job)');
    }
    if (node.enum !== undefined) {
      if (node.enum.length === 0) report(path, 'empty enum');
      for (const v of node.enum)
        if (!hasType(v, node.type)) report(path, `enum value ${JSON.stringify(v)} is not ${node.type}`);
    }
    if (node.type === 'array') {
      if (node.items === undefined) report(path, 'an array without items');
      else walk(node.items, `${path}[]`);
      listTypeProblems(node, path);
    } else if (node.items !== undefined) {
      report(path, 'items on a non-array');
    }
    if (node.type === 'object') {
      if (node.properties !== undefined && typeof node.additionalProperties === 'object') {
        report(path, 'both properties and additionalProperties');
      }
      if (node.properties === undefined && node.additionalProperties === undefined && !preserve) {
        report(path, 'an object with neither properties nor additionalProperties prunes everything');
      }
      for (const name of node.required ?? []) {
        if (node.properties?.[name] === undefined) report(path, `required ${name} is not a property`);
      }
      for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, `${path}.${name}`);
      if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${path}.*`);
    } else if (node.properties !== undefined || node.required !== undefined) {
      report(path, 'properties or required on a non-object');
    }
  }

  function listTypeProblems(node: JSONSchemaProps, path: string): void {
    const listType = node['x-kubernetes-list-type'];
    const keys = node['x-kubernetes-list-map-keys'];
    if (listType === 'map') {
      if (node.items?.type !== 'object') report(path, 'list-type map needs object items');
      if (!keys?.length) report(path, 'list-type map needs x-kubernetes-list-map-keys');
      for (const key of keys ?? []) {
        const field = node.items?.properties?.[key];
        if (field === undefined || !SCALAR_TYPES.has(field.type ?? ''))
          report(path, `map key ${key} is not a scalar field`);
        else if (!node.items?.required?.includes(key) && field.default === undefined) {
          report(path, `map key ${key} must be required or defaulted`);
        }
      }
    } else if (keys !== undefined) {
      report(path, 'x-kubernetes-list-map-keys without list-type map');
    }
    if (listType === 'set' && !SCALAR_TYPES.has(node.items?.type ?? ''))
      report(path, 'list-type set needs scalar items');
  }
}

const stringMap = (description: string): JSONSchemaProps => ({
  description,
  type: 'object',
  additionalProperties: { description: 'A value.', type: 'string' },
});
// The part of ObjectMeta a manifest may carry; the API server decodes it strictly like any other field.
const OBJECT_META: JSONSchemaProps = {
  description: 'Standard object metadata.',
  type: 'object',
  properties: {
    name: {
      description: 'DNS-1123 subdomain.',
      type: 'string',
      maxLength: 253,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    },
    namespace: {
      description: 'DNS-1123 label.',
      type: 'string',
      maxLength: 63,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
    },
    labels: stringMap('Labels.'),
    annotations: stringMap('Annotations.'),
  },
  required: ['name'],
};

/**
 * Problems of a whole manifest (apiVersion, kind, metadata, spec, status) against a CRD, as the API server would list
 * them for `kubectl apply` of that manifest. Empty when it would be accepted.
 */
export function manifestProblems(crd: CustomResourceDefinition, manifest: unknown): string[] {
  const version = crd.spec.versions[0];
  const root = version.schema.openAPIV3Schema;
  const problems = valueProblems({ ...root, properties: { ...root.properties, metadata: OBJECT_META } }, manifest);
  const { apiVersion, kind } = (manifest ?? {}) as { apiVersion?: unknown; kind?: unknown };
  const expected = `${crd.spec.group}/${version.name}`;
  if (apiVersion !== expected) problems.push(`apiVersion: ${JSON.stringify(apiVersion)} is not ${expected}`);
  if (kind !== crd.spec.names.kind) problems.push(`kind: ${JSON.stringify(kind)} is not ${crd.spec.names.kind}`);
  return problems;
}

/**
 * Problems of `value` against a structural schema the way the API server judges a create with strict field validation
 * (`kubectl apply`'s default): unknown fields, types, enums, bounds, patterns, formats, required fields and duplicate
 * list-map keys. Empty when valid.
 */
export function valueProblems(schema: JSONSchemaProps, value: unknown, path = ''): string[] {
  const problems: string[] = [];
  check(schema, value, path);
  return problems;

  function check(node: JSONSchemaProps, v: unknown, at: string): void {
    const report = (problem: string) => problems.push(`${at || '<root>'}: ${problem}`);
    if (!hasType(v, node.type)) {
      report(`expected ${node.type}, got ${describe(v)}`);
      return;
    }
    if (node.enum !== undefined && !node.enum.includes(v)) {
      report(`${JSON.stringify(v)} is not one of ${node.enum.map((e) => JSON.stringify(e)).join(', ')}`);
    }
    if (typeof v === 'number') {
      if (node.minimum !== undefined && (node.exclusiveMinimum ? v <= node.minimum : v < node.minimum)) {
        report(`${v} is below the minimum ${node.minimum}`);
      }
      if (node.maximum !== undefined && (node.exclusiveMaximum ? v >= node.maximum : v > node.maximum)) {
        report(`${v} is above the maximum ${node.maximum}`);
      }
    }
    if (typeof v === 'string') {
      const length = [...v].length;
      if (node.minLength !== undefined && length < node.minLength) report(`shorter than ${node.minLength}`);
      if (node.maxLength !== undefined && length > node.maxLength) report(`longer than ${node.maxLength}`);
      if (node.pattern !== undefined && !new RegExp(node.pattern, 'u').test(v))
        report(`does not match ${node.pattern}`);
      if (node.format === 'date-time' && !DATE_TIME.test(v)) report('not an RFC 3339 date-time');
    }
    if (Array.isArray(v)) {
      if (node.minItems !== undefined && v.length < node.minItems) report(`fewer than ${node.minItems} items`);
      if (node.maxItems !== undefined && v.length > node.maxItems) report(`more than ${node.maxItems} items`);
      v.forEach((item, i) => node.items && check(node.items, item, `${at}[${i}]`));
      const keys = node['x-kubernetes-list-map-keys'];
      if (node['x-kubernetes-list-type'] === 'map' && keys) {
        const seen = new Set<string>();
        for (const item of v) {
          const key = JSON.stringify(keys.map((k) => (item as Record<string, unknown>)?.[k]));
          if (seen.has(key)) report(`duplicate entries for key ${key}`);
          seen.add(key);
        }
      }
    }
    if (isObject(v)) {
      for (const name of node.required ?? []) if (!(name in v)) report(`${name} is required`);
      for (const [name, child] of Object.entries(v)) {
        const field = node.properties?.[name] ?? node.additionalProperties;
        if (field !== undefined) check(field, child, at ? `${at}.${name}` : name);
        else if (node['x-kubernetes-preserve-unknown-fields'] !== true) report(`unknown field "${name}"`);
      }
    }
  }
}

function hasType(v: unknown, type: string | undefined): boolean {
  switch (type) {
    case undefined:
      return true;
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    default:
      return typeof v === type;
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  return Array.isArray(v) ? 'array' : typeof v;
}
