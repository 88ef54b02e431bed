import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';

/** What health reports on. */
export interface HealthDeps {
  vectorBackend: string;
  /** The configured model's name, or undefined for the offline answerer. */
  llmModel?: string;
}

/** GET /health: the contract's body; the message names the vector store and the answerer. */
export function healthRoute(deps: HealthDeps): RouteSpec {
  const answerer = deps.llmModel
    ? `LLM configured (${deps.llmModel})`
    : 'no LLM configured (offline answers from captions)';
  return defineRoute({
    method: 'get',
    path: '/health',
    summary: 'Service health: the vector store and whether an LLM is configured',
    tags: ['health'],
    responses: {
      200: {
        description: 'The service is up',
        schema: Joi.object({
          status: Joi.string().valid('healthy').required(),
          message: Joi.string().required(),
        }).label('HealthBody'),
      },
    },
    handler: (ctx) => {
      ctx.body = {
        status: 'healthy',
        message: `caption-qa is running; vector store: ${deps.vectorBackend}; ${answerer}`,
      };
    },
  });
}

/** GET /model: the configured model id, or the offline answerer's name. */
export function modelRoute(llmModel: string): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/model',
    summary: 'The language model that answers (or "offline-caption-answerer" when none is configured)',
    tags: ['health'],
    responses: {
      200: {
        description: 'The answering model',
        schema: Joi.object({
          status: Joi.string().valid('Success').required(),
          llm_model: Joi.string().required(),
        }).label('ModelBody'),
      },
    },
    handler: (ctx) => {
      ctx.body = { status: 'Success', llm_model: llmModel };
    },
  });
}
