import Joi from 'joi';
import { settingNames } from './settings-scope.js';

/** Raised when the environment does not satisfy a service's schema; `problems` lists every one of them. */
export class ConfigError extends Error {
  constructor(
    readonly service: string,
    readonly problems: string[],
  ) {
    super(`invalid configuration for ${service}:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates the environment variables a service owns against its joi schema (keys are variable names).
 * Variables starting with one of `prefixes` but unknown to the schema are reported as problems, so that a typo
 * never passes silently. All problems are collected before failing. The result has the schema's static type: a
 * schema made with `Joi.object<Env, true>({...})` keeps its keys and `Env` in step.
 */
export function loadConfig<T>(
  service: string,
  schema: Joi.ObjectSchema<T>,
  env: Record<string, string | undefined>,
  prefixes: string[] = [],
): T {
  const known = new Set(settingNames(schema));
  const owned: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (known.has(name)) owned[name] = value;
    else if (prefixes.some((p) => name.startsWith(p))) problems.push(`${name} is not a known setting`);
  }
  const { value, error } = schema.validate(owned, { abortEarly: false, convert: true });
  if (error) problems.push(...error.details.map((d) => d.message));
  if (problems.length > 0) throw new ConfigError(service, problems);
  return value;
}
