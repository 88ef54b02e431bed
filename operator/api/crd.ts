import type { TSchema } from '@sinclair/typebox';
import { CATEGORY, GROUP, VERSION, type ResourceDefinition } from './resources.js';

/** A node of a CRD's `openAPIV3Schema` (apiextensions.k8s.io/v1 JSONSchemaProps, JSON field names). */
export interface JSONSchemaProps {
  description?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  required?: string[];
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  items?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
}

/** An `apiextensions.k8s.io/v1` CustomResourceDefinition with the one version Argus serves. */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: {
      name: string;
      served: true;
      storage: true;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: {
        name: string;
        type: string;
        jsonPath: string;
        description: string;
        priority?: number;
      }[];
      schema: { openAPIV3Schema: JSONSchemaProps };
    }[];
  };
}

// Validation keywords a CRD accepts, copied as they are, in the order the YAML lists them.
const COPIED_KEYWORDS = [
  'format',
  'enum',
  'default',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
] as const;
const KUBERNETES_EXTENSIONS = [
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
] as const;
// Keywords handled below, or TypeBox's own that mean nothing to the API server.
const STRUCTURE_KEYWORDS = new Set(['description', 'type', 'anyOf', 'properties', 'items', 'required']);
const KNOWN_KEYWORDS = new Set<string>([...COPIED_KEYWORDS, ...KUBERNETES_EXTENSIONS, ...STRUCTURE_KEYWORDS]);

/** The CRD of one Argus kind: its TypeBox spec and status schemas as a structural `openAPIV3Schema`. */
export function toCustomResourceDefinition(def: ResourceDefinition): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${GROUP}`, labels: { 'app.kubernetes.io/part-of': 'argus' } },
    spec: {
      group: GROUP,
      names: {
        kind: def.kind,
        listKind: def.listKind,
        plural: def.plural,
        singular: def.singular,
        shortNames: [...def.shortNames],
        categories: [CATEGORY],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: def.printerColumns.map((c) => ({ ...c })),
          schema: {
            openAPIV3Schema: {
              description: def.description,
              type: 'object',
              properties: {
                apiVersion: {
                  description: `The versioned schema of this object: ${GROUP}/${VERSION}.`,
                  type: 'string',
                },
                kind: { description: `The kind of this object: ${def.kind}.`, type: 'string' },
                // The API server owns ObjectMeta's schema: anything beyond `type: object` here is refused.
                metadata: { type: 'object' },
                spec: toStructuralSchema(def.spec, 'spec'),
                status: toStructuralSchema(def.status, 'status'),
              },
              required: ['spec'],
            },
          },
        },
      ],
    },
  };
}

/**
 * A TypeBox schema as a structural schema: unions of string literals become `enum`, `additionalProperties: false` is
 * dropped (the API server prunes unknown fields instead), anything a CRD cannot express throws with its path.
 */
export function toStructuralSchema(schema: TSchema, path: string): JSONSchemaProps {
  const unknown = Object.keys(schema).filter((k) => !KNOWN_KEYWORDS.has(k) && k !== 'additionalProperties');
  if (unknown.length > 0) throw new Error(`${path}: a CRD cannot express ${unknown.join(', ')}`);
  const out: JSONSchemaProps = {};
  if (typeof schema.description === 'string') out.description = schema.description;
  if (schema.anyOf !== undefined) {
    out.type = 'string';
    out.enum = stringLiterals(schema.anyOf, path);
  } else {
    out.type = schema.type;
  }
  for (const key of COPIED_KEYWORDS) if (schema[key] !== undefined) (out as Record<string, unknown>)[key] = schema[key];
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  if (Object.keys(properties).length > 0) {
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, child]) => [name, toStructuralSchema(child, `${path}.${name}`)]),
    );
  }
  const additional: unknown = schema.additionalProperties;
  if (typeof additional === 'object' && additional !== null) {
    out.additionalProperties = toStructuralSchema(additional as TSchema, `${path}.*`);
  } else if (additional === true && !preserve) {
    throw new Error(`${path}: additionalProperties: true needs x-kubernetes-preserve-unknown-fields`);
  }
  if (schema.items !== undefined) out.items = toStructuralSchema(schema.items as TSchema, `${path}[]`);
  if (Array.isArray(schema.required) && schema.required.length > 0) out.required = [...schema.required];
  for (const key of KUBERNETES_EXTENSIONS) {
    if (schema[key] !== undefined) (out as Record<string, unknown>)[key] = schema[key];
  }
  return out;
}

function stringLiterals(members: TSchema[], path: string): string[] {
  return members.map((m) => {
    if (typeof m.const !== 'string') throw new Error(`${path}: only unions of string literals become an enum`);
    return m.const;
  });
}
