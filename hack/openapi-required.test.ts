import { beforeAll, describe, expect, it } from '@jest/globals';
import { DOCUMENTED_SERVICES, serviceDocuments, type DocumentedService } from './openapi-documents.js';

/** A schema object as the check reads it. */
interface Schema {
  $ref?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

/**
 * The objects with properties but no `required` in every 2xx JSON answer and event stream (its events' components)
 * of a document, named by where they are.
 */
function objectsWithoutRequired(doc: Record<string, unknown>): string[] {
  const components = ((doc.components as { schemas?: Record<string, Schema> } | undefined)?.schemas ?? {}) as Record<
    string,
    Schema
  >;
  const found = new Set<string>();
  const visited = new Set<Schema>();
  const walk = (schema: Schema | boolean | undefined, where: string): void => {
    if (typeof schema !== 'object' || visited.has(schema)) return;
    visited.add(schema);
    if (schema.$ref) {
      const name = schema.$ref.replace('#/components/schemas/', '');
      walk(components[name], name);
      return;
    }
    if (schema.properties && Object.keys(schema.properties).length > 0 && !schema.required?.length) found.add(where);
    for (const [key, property] of Object.entries(schema.properties ?? {})) walk(property, `${where}.${key}`);
    walk(schema.items, `${where}[]`);
    walk(schema.additionalProperties, `${where}{}`);
    for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) {
      walk(branch, where);
    }
  };
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^2\d\d$/.test(status)) continue;
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (/[/+]json$|^text\/event-stream$/.test(type))
            walk(media.schema, `${method.toUpperCase()} ${path} → ${status}`);
        }
      }
    }
  }
  return [...found].sort();
}

let documents: Record<DocumentedService, Record<string, unknown>>;
beforeAll(async () => {
  documents = await serviceDocuments();
});

describe('the success answers of every OpenAPI document', () => {
  it.each(DOCUMENTED_SERVICES)(
    '%s: every object with fields marks `required` the ones the server always sends',
    (service) => {
      expect(objectsWithoutRequired(documents[service])).toEqual([]);
    },
  );
});
