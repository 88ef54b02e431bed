import type Joi from 'joi';
import leven from 'leven';

/** What one component reads from the environment: its schema's names, and the prefixes it owns. */
export interface SettingsScope {
  schema: Joi.ObjectSchema;
  /** Under these prefixes, a name no component reads is a typo, never an outside variable. */
  prefixes: string[];
}

/** The variable names `schema` reads. */
export function settingNames(schema: Joi.ObjectSchema): string[] {
  return Object.keys(schema.describe().keys ?? {});
}

/** "X is not a known setting", naming the closest of `known` when one is near enough to be the intended name. */
export function unknownSettingProblem(name: string, known: Iterable<string>): string {
  let closest: string | undefined;
  let distance = Infinity;
  for (const candidate of known) {
    const d = leven(name, candidate);
    if (d < distance) [closest, distance] = [candidate, d];
  }
  // A third of the name may differ: ARGUS_DATA_DRI → ARGUS_DATA_DIR, never an unrelated setting.
  const hint = closest && distance <= Math.max(2, Math.floor(name.length / 3)) ? ` (did you mean ${closest}?)` : '';
  return `${name} is not a known setting${hint}`;
}

/**
 * The names in `env` under a prefix some scope owns that no scope reads: one problem each. A name one component owns
 * the prefix of but another reads (LLM_* shared by two services, ARGUS_* by every one) is known.
 */
export function unknownSettings(env: Record<string, string | undefined>, scopes: SettingsScope[]): string[] {
  const known = new Set(scopes.flatMap((scope) => settingNames(scope.schema)));
  const prefixes = scopes.flatMap((scope) => scope.prefixes);
  return Object.keys(env)
    .filter((name) => env[name] !== undefined && !known.has(name) && prefixes.some((p) => name.startsWith(p)))
    .sort()
    .map((name) => unknownSettingProblem(name, known));
}

/**
 * `env` as `scope` should see it beside `scopes`: without the names under their prefixes that `scope` does not read,
 * so that its own unknown-name check leaves them to `unknownSettings`, which judges them across every scope.
 */
export function envForScope(
  env: Record<string, string | undefined>,
  scope: SettingsScope,
  scopes: SettingsScope[],
): Record<string, string | undefined> {
  const reads = new Set(settingNames(scope.schema));
  const prefixes = scopes.flatMap((s) => s.prefixes);
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => reads.has(name) || !prefixes.some((p) => name.startsWith(p))),
  );
}
