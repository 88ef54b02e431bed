import Joi from 'joi';
import { CAMERA_RULE_EVENT_TYPES, CAMERA_RULE_ID_MAX } from '../../../operator/api/index.js';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import { KNOWN_ACTIONS, type NewRule, type RuleBook } from '../rules/rule-book.js';

/** Text stored in resources and logs: no C0 control characters. */
// eslint-disable-next-line no-control-regex
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;

const text = (max: number) =>
  Joi.string()
    .min(1)
    .max(max)
    .pattern(NO_CONTROL_CHARACTERS)
    .messages({ 'string.pattern.base': '{#label} must not contain control characters' });

/** The original service's spelling of add_to_search, still accepted. */
const ACTION_ALIASES: Record<string, string> = { 'add to search': 'add_to_search' };

const ACTIONS_MESSAGE =
  `{#label} must be one of: ${KNOWN_ACTIONS.join(', ')}` + ' ("add to search" is accepted for add_to_search)';

/** An action: a known value or an alias of one (case and surrounding spaces ignored). */
const action = Joi.string()
  .custom((value: string, helpers) => {
    const key = value.trim().toLowerCase();
    const known = ACTION_ALIASES[key] ?? key;
    return (KNOWN_ACTIONS as readonly string[]).includes(known) ? known : helpers.error('any.only');
  })
  .messages({ 'any.only': ACTIONS_MESSAGE })
  .description(`One of ${KNOWN_ACTIONS.join(', ')}; "add to search" is accepted for add_to_search`);

const ruleRequest = Joi.object<NewRule & { count?: number | null }, true>({
  id: text(CAMERA_RULE_ID_MAX).required().description('Unique rule id'),
  label: text(128).required().description('Detection label (e.g. person, car)'),
  action: action.required(),
  camera: text(253).allow(null).default(null).description('null: every camera'),
  source: text(253).allow(null).default(null).description('Only events of this source (frigate, directory); null: any'),
  event_type: Joi.string()
    .valid(...CAMERA_RULE_EVENT_TYPES)
    .default('end')
    .description('Fire when the tracked object appears (new) or once it has ended (end, the default)'),
  count: Joi.number()
    .integer()
    .allow(null)
    .description('Read-only: accepted for compatibility and ignored; answers carry the number of events matched'),
}).label('Rule');

/** A rule as answered (RuleView: every field is always sent). */
const ruleBody = Joi.object({
  id: Joi.string().required(),
  label: Joi.string().required(),
  action: Joi.string()
    .valid(...KNOWN_ACTIONS)
    .required(),
  camera: Joi.string().allow(null).required(),
  source: Joi.string().allow(null).required(),
  event_type: Joi.string()
    .valid(...CAMERA_RULE_EVENT_TYPES)
    .required(),
  count: Joi.number().integer().required().description('How many recorder events the rule has matched (read-only)'),
}).label('RuleResponse');

const ruleIdParams = Joi.object<{ rule_id: string }, true>({
  rule_id: text(CAMERA_RULE_ID_MAX).required(),
});

const unavailable = { description: 'The rule store (control plane) does not answer' };

/** POST/GET /rules/, GET/DELETE /rules/{rule_id}. */
export function ruleRoutes(rules: RuleBook): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rules/',
      summary: 'List all rules, oldest first',
      tags: ['rules'],
      responses: { 200: { description: 'Every rule', schema: Joi.array().items(ruleBody) }, 503: unavailable },
      handler: async (ctx) => {
        ctx.body = await rules.list();
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rules/',
      summary: 'Add a rule; 400 if the rule id exists',
      tags: ['rules'],
      request: { body: ruleRequest },
      responses: {
        200: { description: 'The rule as stored (count 0)', schema: ruleBody },
        400: { description: 'A rule with this id exists' },
        422: { description: 'Invalid rule: every invalid field listed (unknown actions name the known ones)' },
        503: unavailable,
      },
      handler: async (ctx) => {
        const { count: _ignored, ...rule } = ctx.state.body;
        ctx.body = await rules.add(rule);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/:rule_id',
      summary: 'Get a rule; 404 if unknown',
      tags: ['rules'],
      request: { params: ruleIdParams },
      responses: {
        200: { description: 'The rule', schema: ruleBody },
        404: { description: 'No rule has this id' },
        503: unavailable,
      },
      handler: async (ctx) => {
        ctx.body = await rules.get(ctx.state.params.rule_id);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/rules/:rule_id',
      summary: 'Delete a rule; 404 if unknown',
      tags: ['rules'],
      request: { params: ruleIdParams },
      responses: {
        200: { description: 'The deleted rule, as it was', schema: ruleBody },
        404: { description: 'No rule has this id' },
        503: unavailable,
      },
      handler: async (ctx) => {
        ctx.body = await rules.remove(ctx.state.params.rule_id);
      },
    }),
  ];
}
