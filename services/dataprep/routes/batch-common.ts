import Joi from 'joi';
import { HttpError, type RouteContext } from '../../lib/http/index.js';
import type { IngestItem, IngestJob } from '../../../operator/api/index.js';
import type { DataprepServices } from '../runtime/services.js';
import { counted } from '../../lib/wording/index.js';
import { statusMessage } from './schemas.js';

/** Body of a 202 answer: the job was created and will run in the background. */
export const jobAcceptedSchema = () =>
  statusMessage().keys({
    job_id: Joi.string().required().description('Poll GET /media/jobs/{job_id}'),
    accepted: Joi.number().integer().required().description('Items in the job'),
  });

/** 400 unless `count` items fit in one batch (MM_DATAPREP_BATCH_MAX_ITEMS). */
export function assertBatchSize(services: DataprepServices, count: number, what = 'items'): void {
  const max = services.config.batchMaxItems;
  if (count > max) throw new HttpError(400, `Too many ${what}: ${count} (a batch holds at most ${max})`);
}

/**
 * 400 when every item was refused at submit: a job that could only fail is not created. The message names the first
 * refused items and why.
 */
export function assertRunnableItem(items: IngestItem[]): void {
  if (items.some((item) => item.refused === undefined)) return;
  const reasons = items.slice(0, 3).map((item) => `${item.identifier}: ${item.refused}`);
  const more = items.length > 3 ? ` (and ${counted(items.length - 3, 'more item')})` : '';
  throw new HttpError(400, `Nothing can be ingested: ${reasons.join('; ')}${more}`);
}

/**
 * Answers 202 with the job's id and how many items it holds (and any `extra` fields of the endpoint); the message
 * says how many items were refused at submit, which the job reports as errors.
 */
export function answerAccepted(
  ctx: RouteContext<unknown, unknown, unknown>,
  job: IngestJob,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  const refused = job.spec.items.filter((item) => item.refused !== undefined).length;
  ctx.status = 202;
  ctx.body = {
    status: 'success',
    message: refused ? `${message}; ${counted(refused, 'item')} refused, reported as errors in the job` : message,
    job_id: job.metadata.name,
    accepted: job.spec.items.length,
    ...extra,
  };
}
