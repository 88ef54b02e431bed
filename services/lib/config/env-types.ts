import Joi from 'joi';

/** Boolean env var: accepts true/false/1/0/yes/no (case-insensitive). */
export const envBoolean = () =>
  Joi.boolean().truthy('1', 'yes', 'YES', 'True', 'TRUE').falsy('0', 'no', 'NO', 'False', 'FALSE');

/** An absolute http or https URL env var (a service's endpoint, a peer, a backend). */
export const envHttpUrl = () => Joi.string().uri({ scheme: ['http', 'https'] });

/** TCP port env var. */
export const envPort = () => Joi.number().integer().port();

/** Comma-separated list env var. */
export const envList = () =>
  Joi.array()
    .items(Joi.string().trim())
    .single()
    .custom((v: string[]) => v.flatMap((s) => s.split(',').map((x) => x.trim())).filter(Boolean));
