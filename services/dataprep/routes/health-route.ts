import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import type { DataprepServices } from '../runtime/services.js';

/** GET /health: liveness and configuration report. */
export function healthRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/health',
    summary: 'Liveness probe and configuration report',
    tags: ['health'],
    responses: {
      200: {
        description: 'Health report',
        schema: Joi.object({
          status: Joi.string().required(),
          embedding_client_status: Joi.string().valid('preloaded', 'not_loaded').required(),
          model_name: Joi.string().required(),
          embedding_device: Joi.string().required(),
          use_openvino: Joi.boolean(),
          detection_model: Joi.string(),
          detection_device: Joi.string(),
          vectordb_backend: Joi.string(),
          vectordb_status: Joi.string(),
          storage_backend: Joi.string(),
          default_bucket_name: Joi.string(),
          search_mode: Joi.string()
            .valid('descriptions', 'clip')
            .description('How POST /search answers text queries (an extension of the contract)'),
        }),
      },
    },
    handler: async (ctx) => {
      const { models } = services;
      const status = models.status();
      const embedderLoaded = status.find((m) => m.role === 'image-embedder')?.loaded ?? false;
      const base = {
        status: 'ok',
        embedding_client_status: embedderLoaded ? 'preloaded' : 'not_loaded',
        model_name: models.imageEmbedder.info.name,
        embedding_device: models.imageEmbedder.info.device,
      };
      if (!embedderLoaded) {
        ctx.body = base;
        return;
      }
      let vectordbStatus = 'ok';
      try {
        await services.vectorStore.health();
      } catch {
        vectordbStatus = 'unavailable';
      }
      ctx.body = {
        ...base,
        use_openvino: false,
        detection_model: models.detector.info.name,
        detection_device: models.detector.info.device,
        vectordb_backend: services.vectorStore.backend,
        vectordb_status: vectordbStatus,
        storage_backend: services.objectStore.backend,
        default_bucket_name: services.config.defaultBucket,
        search_mode: services.search.mode,
      };
    },
  });
}
