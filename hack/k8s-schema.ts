/**
 * Offline checks of rendered Kubernetes objects against the API's own schemas, for the chart tests: field types and
 * required fields (the npm package kubernetes-models, generated from the OpenAPI document) and unknown fields (the
 * type maps of @kubernetes/client-node's models, generated from the same document), as `kubectl apply
 * --validate=strict` would refuse them. No API server is needed.
 */
import * as k8s from '@kubernetes/client-node';
import type { Manifest } from './helm-template.js';

interface Attribute {
  baseName: string;
  type: string;
}
type ModelClass = { getAttributeTypeMap(): Attribute[] };

const models = k8s as unknown as Record<string, ModelClass | undefined>;
const PRIMITIVES = new Set(['string', 'number', 'boolean', 'Date', 'any', 'object', 'IntOrString']);

/** The client-node model name of a kind: `apps/v1` Deployment → V1Deployment, `autoscaling/v2` … → V2…. */
function modelName(manifest: Manifest): string {
  const version = manifest.apiVersion.split('/').pop()!;
  return `${version[0].toUpperCase()}${version.slice(1)}${manifest.kind}`;
}

/** Paths of the fields of `value` that its type (a client-node type name) does not have. */
function unknownFields(value: unknown, type: string, at: string): string[] {
  if (value === null || value === undefined || PRIMITIVES.has(type)) return [];
  const array = /^Array<(.+)>$/.exec(type);
  if (array)
    return Array.isArray(value) ? value.flatMap((item, i) => unknownFields(item, array[1], `${at}[${i}]`)) : [];
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return Object.entries(value as object).flatMap(([key, item]) => unknownFields(item, map[1], `${at}.${key}`));
  const model = models[type];
  if (!model || typeof value !== 'object') return [];
  const attributes = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  return Object.entries(value as object).flatMap(([key, item]) => {
    const itemType = attributes.get(key);
    return itemType === undefined ? [`${at}.${key}`] : unknownFields(item, itemType, `${at}.${key}`);
  });
}

/** What the Kubernetes API schema says of each manifest (types, required fields, unknown fields): empty when valid. */
export async function apiSchemaProblems(manifests: Manifest[]): Promise<string[]> {
  const problems: string[] = [];
  for (const m of manifests) {
    const [group, version] = m.apiVersion.includes('/') ? m.apiVersion.split('/') : ['', m.apiVersion];
    const where = `${m.kind}/${m.metadata.name}`;
    let model: (new (data: unknown) => { validate(): void }) | undefined;
    try {
      model = (await import(`kubernetes-models/${group ? `${group}/` : ''}${version}/${m.kind}`))[m.kind];
    } catch {
      problems.push(`${where}: ${m.apiVersion} ${m.kind} is not a Kubernetes API kind`);
      continue;
    }
    try {
      new model!(m).validate();
    } catch (error) {
      problems.push(`${where}: ${(error as Error).message}`);
    }
    // CRDs are checked against the generator's own output (chart.test.ts): their schemas are JSON Schema, not fields.
    if (models[modelName(m)] && m.kind !== 'CustomResourceDefinition')
      for (const field of unknownFields(m, modelName(m), ''))
        problems.push(`${where}: unknown field ${field.slice(1)}`);
  }
  return problems;
}
