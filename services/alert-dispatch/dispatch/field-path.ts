/** Reads a dotted path (`metadata.zone`, `payloads.0.kind`) from a plain object; undefined when any step is missing. */
export function readFieldPath(root: unknown, path: string): unknown {
  let current: unknown = root;
  for (const step of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, step)) return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}
