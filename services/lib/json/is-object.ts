/**
 * Whether `value` is an object that is neither null nor an array: what JSON Schema and joi's object() call an
 * object. Values from JSON.parse or YAML are plain objects, so this is all a type check of them needs.
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
