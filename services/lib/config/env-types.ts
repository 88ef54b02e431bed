import Joi from 'joi';

/** Boolean env var: accepts true/false/1/0/yes/no (case-insensitive). */
export const envBoolean = () =>
  Joi.boolean().truthy('1', 'yes', 'YES', 'True', 'TRUE').falsy('0', 'no', 'NO', 'False', 'FALSE');

/** TCP port env var. */
export const envPort = () => Joi.number().integer().port();

/** Comma-separated list env var. */
export const envList = () =>
  Joi.array()
    .items(Joi.string().trim())
    .single()
    .custom((v: string[]) => v.flatMap((s) => s.split(',').map((x) => x.trim())).filter(Boolean));
