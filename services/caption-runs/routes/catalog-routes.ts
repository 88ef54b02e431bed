import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import type { Logger } from '../../lib/log/index.js';
import { listDetectionModels } from '../catalog/detection-models.js';
import { PIPELINES } from '../catalog/pipelines.js';
import { listVlmModels } from '../catalog/vlm-models.js';
import type { VlmConfig } from '../config.js';

/** GET /vlm-models: the VLM server's models and the offline captioner. */
export function vlmModelsRoute(vlm: VlmConfig | undefined, logger: Logger): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/vlm-models',
    summary: 'Captioning models: the configured VLM server’s models, then the offline captioner',
    tags: ['catalog'],
    responses: {
      200: {
        description: '`warning` only when the VLM server could not list its models',
        schema: Joi.object({
          models: Joi.array()
            .items(
              Joi.object({
                name: Joi.string().required().description('A modelName for a run'),
                device: Joi.string().required().description('cpu (offline captioner) or vlm-endpoint'),
              }).label('VlmModel'),
            )
            .required(),
          warning: Joi.string(),
        }).label('VlmModelList'),
      },
    },
    handler: async (ctx) => {
      ctx.body = await listVlmModels(vlm, logger);
    },
  });
}

/** GET /detection-models: the detector models of the models directory. */
export function detectionModelsRoute(modelsDir: string): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/detection-models',
    summary: 'Detection models: every detector in the models directory (ARGUS_MODELS_DIR)',
    tags: ['catalog'],
    responses: {
      200: {
        description: 'Names a run may give as detectionModelName',
        schema: Joi.object({ models: Joi.array().items(Joi.string()).required() }).label('DetectionModelList'),
      },
    },
    handler: async (ctx) => {
      ctx.body = { models: await listDetectionModels(modelsDir) };
    },
  });
}

/** GET /pipelines: the pipeline configurations, one of each type at least. */
export function pipelinesRoute(): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/pipelines',
    summary: 'Pipeline configurations: with detection (detector, then captioner) and without',
    tags: ['catalog'],
    responses: {
      200: {
        description: 'Every pipeline a run may name',
        schema: Joi.object({
          pipelines: Joi.array()
            .items(
              Joi.object({
                pipeline_name: Joi.string().required(),
                pipeline_display_name: Joi.string().required(),
                pipeline_type: Joi.string().valid('detection', 'non-detection').required(),
              }).label('Pipeline'),
            )
            .required(),
        }).label('PipelineList'),
      },
    },
    handler: (ctx) => {
      ctx.body = { pipelines: PIPELINES };
    },
  });
}
