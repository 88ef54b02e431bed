import { describe, expect, it } from '@jest/globals';
import Joi from 'joi';
import { ConfigError, ConfigErrors, loadConfig, loadConfigs, platformEnvSchema, platformSettings } from './index.js';
import type { ConfigPart, SettingsScope } from './index.js';

/** A part whose loader is a real loadConfig with its own unknown-name check, as the services' loaders are. */
function part(name: string, settings: SettingsScope): ConfigPart {
  return { name, settings, load: (env) => loadConfig(name, settings.schema, env, settings.prefixes) };
}

const alerts = part('alerts', {
  schema: Joi.object({ ...platformEnvSchema, ALERTS_PORT: Joi.number().port(), LLM_BASE_URL: Joi.string().uri() }),
  prefixes: ['ALERTS_', 'LLM_'],
});
const answers = part('answers', {
  schema: Joi.object({
    ...platformEnvSchema,
    ANSWERS_PORT: Joi.number().port(),
    LLM_BASE_URL: Joi.string().uri(),
    LLM_MAX_TOKENS: Joi.number(),
  }),
  prefixes: ['ANSWERS_', 'LLM_'],
});
const platform = part('argus', platformSettings);

function problemsOf(run: () => unknown): Record<string, string[]> {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigErrors);
    return Object.fromEntries((error as ConfigErrors).errors.map((e: ConfigError) => [e.service, e.problems]));
  }
  throw new Error('expected ConfigErrors');
}

describe('loadConfigs', () => {
  it('returns every configuration, in order, when all are valid', () => {
    const [p, a, b] = loadConfigs({ ALERTS_PORT: '1', ANSWERS_PORT: '2', LLM_MAX_TOKENS: '9', PATH: '/bin' }, [
      platform,
      alerts,
      answers,
    ]) as Record<string, unknown>[];
    expect(p).toMatchObject({ ARGUS_DATA_DIR: '.data' });
    expect(a).toMatchObject({ ALERTS_PORT: 1 });
    expect(a).not.toHaveProperty('LLM_MAX_TOKENS');
    expect(b).toMatchObject({ ANSWERS_PORT: 2, LLM_MAX_TOKENS: 9 });
  });

  it('accepts a shared-prefix name one part reads, though another part owning the prefix does not', () => {
    expect(() => loadConfigs({ LLM_MAX_TOKENS: '9' }, [platform, alerts, answers])).not.toThrow();
    // Alone, the part that does not read it refuses it: the judgement is across the parts being started.
    expect(problemsOf(() => loadConfigs({ LLM_MAX_TOKENS: '9' }, [platform, alerts]))).toEqual({
      argus: ['LLM_MAX_TOKENS is not a known setting'],
    });
  });

  it('reports every problem of every part at once: unknown names (with a suggestion), each invalid value once', () => {
    const problems = problemsOf(() =>
      loadConfigs(
        { ARGUS_DATA_DRI: '/x', ARGUS_ORT_THREADS: '0', ALERTS_PORT: 'x', ANSWERS_PORT: '70000', LLM_TYPO: '1' },
        [platform, alerts, answers],
      ),
    );
    expect(problems).toEqual({
      argus: [
        'ARGUS_DATA_DRI is not a known setting (did you mean ARGUS_DATA_DIR?)',
        'LLM_TYPO is not a known setting',
        '"ARGUS_ORT_THREADS" must be greater than or equal to 1',
      ],
      alerts: ['"ALERTS_PORT" must be a number'],
      answers: ['"ANSWERS_PORT" must be a valid port'],
    });
  });

  it('passes errors other than ConfigError on', () => {
    const broken: ConfigPart = {
      ...platform,
      load: () => {
        throw new TypeError('bug');
      },
    };
    expect(() => loadConfigs({}, [broken])).toThrow(TypeError);
  });
});
