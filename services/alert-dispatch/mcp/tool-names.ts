import { createHash } from 'node:crypto';

/** Longest tool name most LLM function-calling APIs accept. */
const MAX_NAME_LENGTH = 64;

/**
 * `<server>__<tool>` with every character outside `[A-Za-z0-9_-]` replaced by `_`; names longer than 64 characters
 * are cut and end in a short hash of the full name, so they stay unique and usable as LLM function names.
 */
export function qualifiedToolName(server: string, tool: string): string {
  const name = `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_');
  if (name.length <= MAX_NAME_LENGTH) return name;
  const hash = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_NAME_LENGTH - 9)}_${hash}`;
}
