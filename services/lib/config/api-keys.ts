import { readFileSync } from 'node:fs';
import type Joi from 'joi';

/**
 * What a key may be: RFC 6750's `b64token` (letters, digits, `-._~+/`, then `=` padding), so that it fits an
 * `Authorization: Bearer` header as it is, and at least 16 characters, so that no short word guards a service.
 */
const KEY_SYNTAX = /^[A-Za-z0-9\-._~+/]{16,4096}=*$/;

/** The keys of a comma-separated list (ARGUS_API_KEYS): entries trimmed, empty ones skipped. */
export function parseApiKeyList(text: string): string[] {
  return checkedKeys(text.split(','), 'names');
}

/** The keys of a file with one key per line (ARGUS_API_KEYS_FILE): lines trimmed, blank lines and `#` comments skipped. */
export function readApiKeysFile(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`, { cause: error });
  }
  return checkedKeys(
    text.split(/\r?\n/).filter((line) => !line.trimStart().startsWith('#')),
    'holds',
  );
}

/** The non-empty entries, each checked against KEY_SYNTAX; the error never quotes a key (it would reach the logs). */
function checkedKeys(entries: string[], verb: string): string[] {
  const keys = entries.map((entry) => entry.trim()).filter(Boolean);
  if (keys.length === 0) throw new Error(`${verb} no key`);
  keys.forEach((key, index) => {
    if (!KEY_SYNTAX.test(key)) {
      throw new Error(`key ${index + 1} is not 16 to 4096 characters of letters, digits and -._~+/ (then = padding)`);
    }
  });
  return [...new Set(keys)];
}

/**
 * A joi rule that checks a setting with `parse` (which throws a message without the setting's value) and keeps it;
 * refused beside `excludes`, the other way of giving the keys (a rule of the field: service schemas spread the
 * platform's fields into their own object).
 */
export function keysRule(parse: (value: string) => string[], excludes?: string): Joi.CustomValidator<string> {
  return (value, helpers) => {
    const settings = helpers.state.ancestors[0] as Record<string, unknown> | undefined;
    if (excludes && settings?.[excludes] !== undefined) {
      return helpers.message({ custom: `{{#label}} and ${excludes} are both set: give the keys one way` });
    }
    try {
      parse(value);
      return value;
    } catch (error) {
      return helpers.message({ custom: `{{#label}} ${(error as Error).message}` });
    }
  };
}
