import Joi from 'joi';
import { dedupSchema, escalationSchema, toolArgumentsSchema, toolListSchema } from '../dispatch/schemas.js';

/** One entry of the subscriptions file. */
export const subscriptionEntrySchema = Joi.object({
  alert_name: Joi.string().min(1).max(256).required(),
  tools: toolListSchema.default([]),
  tool_arguments: toolArgumentsSchema.default({}),
  dedup: dedupSchema,
  escalation: escalationSchema,
});

/** The subscriptions file: `subscriptions:` list with unique alert names. */
export const subscriptionFileSchema = Joi.object({
  subscriptions: Joi.array().items(subscriptionEntrySchema).unique('alert_name').default([]),
});
