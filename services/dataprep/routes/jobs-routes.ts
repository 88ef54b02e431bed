import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { INGEST_STATES } from '../../../operator/api/index.js';
import { batchJobStatus } from '../jobs/ingest-jobs.js';
import type { DataprepServices } from '../runtime/services.js';
import { errorBody } from './schemas.js';

const jobParams = () => Joi.object<{ job_id: string }, true>({ job_id: Joi.string().max(253).required() });

/** The contract's batch job status body, for the OpenAPI document. */
export const batchJobStatusSchema = () =>
  Joi.object({
    status: Joi.string().valid('success').required(),
    job_id: Joi.string().required(),
    state: Joi.string()
      .valid(...INGEST_STATES)
      .required(),
    total: Joi.number().integer().required(),
    completed: Joi.number().integer().required(),
    failed: Joi.number().integer().required(),
    skipped: Joi.number().integer().required().description('Items skipped because the job was cancelled'),
    items: Joi.array()
      .items(
        Joi.object({
          identifier: Joi.string().required(),
          video_id: Joi.string(),
          status: Joi.string().valid('success', 'error', 'skipped').required(),
          message: Joi.string(),
          embeddings_count: Joi.number().integer(),
        }),
      )
      .required(),
  });

const unknownJob = (id: string) => new HttpError(404, `Job ${id} not found`);

/** GET /media/jobs/{job_id}: the status of a batch job (an IngestJob). */
export function getJobRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/media/jobs/:job_id',
    summary: 'Status of a batch job',
    tags: ['jobs'],
    request: { params: jobParams() },
    responses: {
      200: { description: 'Batch job status', schema: batchJobStatusSchema() },
      404: { description: 'Unknown job', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const id = ctx.state.params.job_id;
      const job = await services.jobs.get(id);
      if (!job) throw unknownJob(id);
      ctx.body = batchJobStatus(job);
    },
  });
}

/** DELETE /media/jobs/{job_id}: requests cooperative cancellation and answers the current status. */
export function cancelJobRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'delete',
    path: '/media/jobs/:job_id',
    summary: 'Cancel a batch job (cooperative)',
    description:
      'Items not yet started are skipped; the item in progress finishes. The job ends `cancelled` when at least one item was skipped.',
    tags: ['jobs'],
    request: { params: jobParams() },
    responses: {
      200: { description: 'Cancellation requested; the current status', schema: batchJobStatusSchema() },
      404: { description: 'Unknown job', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const id = ctx.state.params.job_id;
      const job = await services.jobs.cancel(id);
      if (!job) throw unknownJob(id);
      ctx.body = batchJobStatus(job);
    },
  });
}
