import joiToSwagger from 'joi-to-swagger';
import type Joi from 'joi';

/** An OpenAPI 3.0 schema object, as far as the document builder reads and corrects one. */
export interface OpenApiSchema {
  type?: string;
  description?: string;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  additionalProperties?: boolean | OpenApiSchema;
  items?: OpenApiSchema;
  oneOf?: OpenApiSchema[];
  anyOf?: OpenApiSchema[];
  enum?: unknown[];
  nullable?: boolean;
  [keyword: string]: unknown;
}

// joi-to-swagger is CommonJS (`module.exports = parse`); its typings declare an ES default export instead.
const j2s = joiToSwagger as unknown as (schema: Joi.Schema) => { swagger: OpenApiSchema };

/** The schema of an uploaded file in a multipart/form-data body (OpenAPI 3; Swagger 2 said `type: file`). */
export const BINARY_SCHEMA: OpenApiSchema = { type: 'string', format: 'binary' };

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const sameSchema = (a: OpenApiSchema, b: OpenApiSchema) => JSON.stringify(a) === JSON.stringify(b);

/**
 * joi's `.when()` becomes a `oneOf` of the field's schema under each condition (joi-to-swagger marks a branch that
 * makes the field required with `x-required`). Whether a field is required cannot be said per property, and the
 * branches overlap (two `type: string`s match every string), so a validator following `oneOf` would refuse what the
 * server accepts. Branches that agree once `x-required` is dropped, or one that allows anything, collapse into the
 * field's own schema; branches that really differ become an `anyOf` (joi takes whichever condition holds).
 */
function collapseConditions(schema: OpenApiSchema): void {
  const branches = schema.oneOf;
  if (!branches) return;
  delete schema.oneOf;
  for (const branch of branches) delete branch['x-required'];
  if (branches.some((branch) => Object.keys(branch).length === 0)) return;
  if (branches.every((branch) => sameSchema(branch, branches[0]))) {
    Object.assign(schema, { ...branches[0], ...schema });
    return;
  }
  schema.anyOf = branches;
}

/** Corrects one converted schema node in place (its children first) to what OpenAPI 3.0.3 and its tools expect. */
function correct(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(correct);
    return;
  }
  if (!isPlainObject(node)) return;
  for (const child of Object.values(node)) correct(child);
  const schema = node as OpenApiSchema;
  if (schema.type === 'file') {
    // Swagger 2's file parameter (`.meta({ swaggerType: 'file' })`): a binary string in OpenAPI 3.
    delete schema.in;
    Object.assign(schema, BINARY_SCHEMA);
  }
  collapseConditions(schema);
  if (schema.type === 'object' && schema.properties && Object.keys(schema.properties).length === 0) {
    // joi-to-swagger leaves out additionalProperties for `.unknown()` objects: say that any key is allowed, so that
    // generators type a free-form object as a record of unknown values rather than an empty one.
    delete schema.properties;
    schema.additionalProperties ??= true;
  }
  // Under OpenAPI 3.0 `nullable` does not widen an `enum`: null must be listed among the values.
  if (schema.nullable && schema.enum && !schema.enum.includes(null)) schema.enum.push(null);
  delete schema['x-required'];
}

/** The OpenAPI 3.0.3 schema of a joi schema: joi-to-swagger's conversion, corrected where it falls short. */
export function toOpenApiSchema(schema: Joi.Schema): OpenApiSchema {
  // A copy as JSON: the conversion may share objects with the joi schema (defaults, examples) that correct() changes.
  const converted = JSON.parse(JSON.stringify(j2s(schema).swagger)) as OpenApiSchema;
  correct(converted);
  return converted;
}
