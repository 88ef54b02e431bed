import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import type { LoadedMultiPoseEstimator } from '../../lib/inference/index.js';
import type { Pattern } from '../patterns/pattern.js';
import type { VlmConfirmer } from '../vlm/vlm-confirmer.js';

/** What health reports on. */
export interface HealthDeps {
  estimator: Pick<LoadedMultiPoseEstimator, 'info' | 'loaded' | 'manifest'>;
  patterns: Pattern[];
  vlm?: VlmConfirmer;
  vlmEnabledByDefault: boolean;
}

/** GET /health: the pose model (and whether its session exists yet), the VLM and the patterns. */
export function healthRoute(deps: HealthDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/health',
    summary: 'Service health: pose model, VLM configuration, patterns',
    tags: ['health'],
    responses: {
      200: {
        description: 'The service is up',
        schema: Joi.object({
          status: Joi.string().valid('healthy').required(),
          service: Joi.string().required(),
          pose_model: Joi.object({
            name: Joi.string().required(),
            device: Joi.string().required(),
            loaded: Joi.boolean().required(),
            source: Joi.string().required(),
          }).required(),
          vlm: Joi.object({
            configured: Joi.boolean().required(),
            model: Joi.string().allow(null).required(),
            enabled_by_default: Joi.boolean().required(),
            circuit: Joi.string().valid('closed', 'open', 'half-open').allow(null).required(),
          }).required(),
          patterns: Joi.array()
            .items(Joi.object({ id: Joi.string().required(), enabled: Joi.boolean().required() }))
            .required(),
        }).label('FrameAnalysisHealth'),
      },
    },
    handler: (ctx) => {
      const { estimator, vlm } = deps;
      ctx.body = {
        status: 'healthy',
        service: 'frame-analysis',
        pose_model: {
          name: estimator.info.name,
          device: estimator.info.device,
          loaded: estimator.loaded,
          source: estimator.manifest.source ?? 'user-supplied',
        },
        vlm: {
          configured: vlm !== undefined,
          model: vlm?.model ?? null,
          enabled_by_default: deps.vlmEnabledByDefault,
          circuit: vlm?.circuit() ?? null,
        },
        patterns: deps.patterns.map((p) => ({ id: p.id, enabled: p.enabled })),
      };
    },
  });
}
