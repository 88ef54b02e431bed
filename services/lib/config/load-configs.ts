import { ConfigError } from './load-config.js';
import { envForScope, unknownSettings, type SettingsScope } from './settings-scope.js';

/** One component of a process: the settings it reads, and how it validates them into its configuration. */
export interface ConfigPart<C = unknown> {
  name: string;
  settings: SettingsScope;
  /** Throws ConfigError listing every problem; starts nothing. */
  load(env: NodeJS.ProcessEnv): C;
}

/** Raised when components of one process are misconfigured: every problem of every component, each named once. */
export class ConfigErrors extends Error {
  constructor(readonly errors: ConfigError[]) {
    super(errors.map((error) => error.message).join('\n'));
    this.name = 'ConfigErrors';
  }
}

/**
 * Validates the settings of every part before any of them starts and returns their configurations in order, or
 * throws ConfigErrors with all the problems together. Unknown names are judged across the parts (a name one part
 * reads is known to all: shared LLM_* settings, the ARGUS_* platform) and reported under `processName`; a problem
 * several parts share (a platform setting every service validates) is reported by the first only.
 */
export function loadConfigs(env: NodeJS.ProcessEnv, parts: ConfigPart[], processName = 'argus'): unknown[] {
  const scopes = parts.map((part) => part.settings);
  const problems = new Map<string, string[]>();
  const report = (name: string, found: string[]) => {
    const seen = [...problems.values()].flat();
    const fresh = found.filter((problem) => !seen.includes(problem));
    if (fresh.length > 0) problems.set(name, [...(problems.get(name) ?? []), ...fresh]);
  };
  report(processName, unknownSettings(env, scopes));
  const configs = parts.map((part) => {
    try {
      return part.load(envForScope(env, part.settings, scopes));
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      report(part.name, error.problems);
      return undefined;
    }
  });
  if (problems.size > 0) {
    throw new ConfigErrors([...problems].map(([name, found]) => new ConfigError(name, found)));
  }
  return configs;
}
