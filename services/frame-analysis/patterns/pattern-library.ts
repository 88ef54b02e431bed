import { readFile } from 'node:fs/promises';
import Joi from 'joi';
import YAML from 'yaml';
import type { Pattern } from './pattern.js';
import { SIGNAL_NAMES } from './signals.js';

/** The library file could not be read or is invalid; `problems` lists every problem found. */
export class PatternLibraryError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid pattern library ${file}:\n  - ${problems.join('\n  - ')}`);
    this.name = 'PatternLibraryError';
  }
}

const zone = Joi.object({ min: Joi.number(), max: Joi.number() })
  .or('min', 'max')
  .custom((value: { min?: number; max?: number }, helpers) =>
    value.min !== undefined && value.max !== undefined && value.min > value.max
      ? helpers.message({ custom: '{{#label}}: min is above max' })
      : value,
  );

const signal = Joi.string().valid(...SIGNAL_NAMES);

const rule = Joi.object({
  kind: Joi.string().valid('transition', 'sustained', 'stillness').required(),
})
  .when(Joi.object({ kind: 'transition' }).unknown(), {
    then: Joi.object({
      signal: signal.required(),
      side: Joi.string().valid('either', 'left', 'right').default('either'),
      from: zone.required(),
      to: zone.required(),
      full_change: Joi.number().positive().required(),
      min_hold_frames: Joi.number().integer().min(1).default(1),
      max_duration_ms: Joi.number().integer().positive(),
      hip_drop: Joi.object({ min: Joi.number().min(0).required(), full: Joi.number().positive().required() }),
    }),
  })
  .when(Joi.object({ kind: 'sustained' }).unknown(), {
    then: Joi.object({
      signal: signal.required(),
      side: Joi.string().valid('both', 'either', 'left', 'right').default('either'),
      zone: zone.required(),
      min_frames: Joi.number().integer().min(1).default(1),
    }),
  })
  .when(Joi.object({ kind: 'stillness' }).unknown(), {
    then: Joi.object({
      max_displacement: Joi.number().positive().required(),
      min_duration_ms: Joi.number().integer().positive().required(),
    }),
  });

const pattern = Joi.object({
  id: Joi.string()
    .pattern(/^[a-z][a-z0-9_]{0,63}$/)
    .required(),
  description: Joi.string().required(),
  enabled: Joi.boolean().default(true),
  threshold: Joi.number().greater(0).max(1).required(),
  min_keypoint_score: Joi.number().min(0).max(1).required(),
  rule: rule.required(),
});

const library = Joi.object({
  version: Joi.number().valid(1).required(),
  patterns: Joi.array().items(pattern).min(1).unique('id').required(),
});

/** Validates a parsed library; throws PatternLibraryError with every problem. */
export function parsePatternLibrary(source: unknown, file: string): Pattern[] {
  const { value, error } = library.validate(source, { abortEarly: false, convert: false });
  if (error)
    throw new PatternLibraryError(
      file,
      error.details.map((d) => d.message),
    );
  return value.patterns as Pattern[];
}

/** Reads and validates the YAML pattern library at `file`; throws PatternLibraryError listing every problem. */
export async function loadPatternLibrary(file: string): Promise<Pattern[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new PatternLibraryError(file, [`cannot read it: ${(error as NodeJS.ErrnoException).code ?? 'error'}`]);
  }
  const document = YAML.parseDocument(text, { prettyErrors: false });
  if (document.errors.length > 0)
    throw new PatternLibraryError(
      file,
      document.errors.map((e) => e.message),
    );
  return parsePatternLibrary(document.toJS(), file);
}
