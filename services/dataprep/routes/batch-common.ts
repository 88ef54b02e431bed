import Joi from 'joi';
import { HttpError, type RouteContext } from '../../lib/http/index.js';
import type { IngestJob } from '../../../operator/api/index.js';
import type { DataprepServices } from '../services.js';
import { statusMessage } from './schemas.js';

/** Body of a 202 answer: the job was created and will run in the background. */
export const jobAcceptedSchema = () =>
  statusMessage().keys({
    job_id: Joi.string().description('Poll GET /media/jobs/{job_id}'),
    accepted: Joi.number().integer().description('Items in the job'),
  });

/** 400 unless `count` items fit in one batch (MM_DATAPREP_BATCH_MAX_ITEMS). */
export function assertBatchSize(services: DataprepServices, count: number, what = 'items'): void {
  const max = services.config.batchMaxItems;
  if (count > max) throw new HttpError(400, `Too many ${what}: ${count} (a batch holds at most ${max})`);
}

/** Answers 202 with the job's id and how many items it holds (and any `extra` fields of the endpoint). */
export function answerAccepted(
  ctx: RouteContext,
  job: IngestJob,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  ctx.status = 202;
  ctx.body = {
    status: 'success',
    message,
    job_id: job.metadata.name,
    accepted: job.spec.items.length,
    ...extra,
  };
}
