import { beforeAll, describe, expect, it } from '@jest/globals';
import { schemaViolations } from '../test/support/contract-check.js';
import { DOCUMENTED_SERVICES, serviceDocuments, type DocumentedService } from './openapi-documents.js';

/** A media type object as the check reads it. */
interface Media {
  schema?: object;
  example?: unknown;
}

interface Operation {
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}

/** Every JSON media type of a request body or a success response: where it is, and what it holds. */
function jsonMedia(doc: Record<string, unknown>): Array<{ where: string; media: Media }> {
  const found: Array<{ where: string; media: Media }> = [];
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const at = `${method.toUpperCase()} ${path}`;
      const contents: Array<[string, Record<string, Media>]> = [];
      if (op.requestBody) contents.push([`${at} request`, op.requestBody.content]);
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 300 && response.content) contents.push([`${at} → ${status}`, response.content]);
      }
      for (const [where, content] of contents) {
        for (const [type, media] of Object.entries(content)) {
          if (/[/+]json$/.test(type) && media.schema) found.push({ where: `${where} ${type}`, media });
        }
      }
    }
  }
  return found;
}

let documents: Record<DocumentedService, Record<string, unknown>>;
beforeAll(async () => {
  documents = await serviceDocuments();
});

describe('the examples of every OpenAPI document', () => {
  it.each(DOCUMENTED_SERVICES)(
    '%s: every JSON request body and success response has an example that validates against its schema',
    (service) => {
      const media = jsonMedia(documents[service]);
      expect(media.length).toBeGreaterThan(0);
      const problems = media.flatMap(({ where, media: { schema, example } }) =>
        example === undefined
          ? [`${where}: no example`]
          : schemaViolations(schema!, example).map((violation) => `${where}: ${violation}`),
      );
      expect(problems).toEqual([]);
    },
  );
});
