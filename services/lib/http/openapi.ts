import joiToSwagger from 'joi-to-swagger';
import type Joi from 'joi';
import type { RouteSpec } from './route.js';

/** Title, version and description of a service's OpenAPI document. */
export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
}

/** An OpenAPI schema object, as far as the document builder reads one. */
interface OpenApiSchema {
  description?: string;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  [keyword: string]: unknown;
}

// joi-to-swagger is CommonJS (`module.exports = parse`); its typings declare an ES default export instead.
const j2s = joiToSwagger as unknown as (schema: Joi.Schema) => { swagger: OpenApiSchema };
const toSchema = (schema: Joi.Schema) => j2s(schema).swagger;

function parameters(location: 'path' | 'query', schema?: Joi.ObjectSchema) {
  if (!schema) return [];
  const converted = toSchema(schema);
  return Object.entries(converted.properties ?? {}).map(([name, s]) => ({
    name,
    in: location,
    required: location === 'path' || (converted.required ?? []).includes(name),
    schema: s,
    description: s.description,
  }));
}

/**
 * Builds the OpenAPI 3 document from the same route specs that validate requests; `errorBody` documents every error
 * answer (4xx, 5xx) whose spec names no schema of its own.
 */
export function buildOpenApi(
  info: ApiInfo,
  basePath: string,
  routes: RouteSpec[],
  errorBody?: Joi.Schema,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const oasPath = (basePath + route.path).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const req = route.request ?? {};
    const headerParams = Object.entries(req.headers ?? {}).map(([name, description]) => ({
      name,
      in: 'header',
      required: false,
      schema: { type: 'string' },
      description,
    }));
    let requestBody: unknown;
    if (req.body) requestBody = { required: true, content: { 'application/json': { schema: toSchema(req.body) } } };
    if (req.multipart) {
      requestBody = { required: true, content: { 'multipart/form-data': { schema: toSchema(req.multipart) } } };
    }
    const responses = Object.fromEntries(
      Object.entries(route.responses).map(([status, spec]) => {
        const r = Number(status) >= 400 && !spec.schema && !spec.contentType ? { ...spec, schema: errorBody } : spec;
        return [
          status,
          {
            description: r.description,
            ...(r.schema || r.contentType
              ? {
                  content: {
                    [r.contentType ?? 'application/json']: r.schema ? { schema: toSchema(r.schema) } : {},
                  },
                }
              : {}),
          },
        ];
      }),
    );
    paths[oasPath] ??= {};
    paths[oasPath][route.method] = {
      summary: route.summary,
      description: route.description,
      tags: route.tags,
      parameters: [...parameters('path', req.params), ...parameters('query', req.query), ...headerParams],
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }
  return { openapi: '3.0.3', info, paths };
}
