import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { liveContentOwner } from '../media/content-owners.js';
import { scanDirectory, type FoundMedia } from '../ingest-root/directory-scan.js';
import { sha256OfFile } from '../ingest-root/file-hash.js';
import type { IngestRoot } from '../ingest-root/ingest-root.js';
import { checkUserMetadata, readSidecar } from '../ingest-root/user-metadata.js';
import { duplicateMessage } from '../errors.js';
import type { IngestItem } from '../../../operator/api/index.js';
import type { DataprepServices } from '../runtime/services.js';
import { itemIdentifier } from '../jobs/ingest-jobs.js';
import { newVideoId } from '../media/video-ids.js';
import { answerAccepted, assertBatchSize, assertRunnableItem, jobAcceptedSchema } from './batch-common.js';
import {
  bodyTags,
  bucketName,
  detectionConfidence,
  enableObjectDetection,
  errorBody,
  resolveTargetBucket,
  statusMessage,
} from './schemas.js';
import { counted } from '../../lib/wording/index.js';

/** Longest root-relative path a job item holds (the resource API's bound). */
const JOB_PATH_MAX = 1024;

/** How many names a submit message lists before it only counts. */
const NAMES_LISTED = 20;

function listNames(names: string[]): string {
  const shown = names.slice(0, NAMES_LISTED).join(', ');
  return names.length > NAMES_LISTED ? `${shown} and ${names.length - NAMES_LISTED} more` : shown;
}

function reservedKeysError(origin: string, keys: string[]): HttpError {
  return new HttpError(400, `${origin}: reserved metadata keys may not be used: ${keys.join(', ')}`);
}

/** Every sidecar's warnings, and why each file whose sidecar uses a reserved key is refused (it fails alone). */
async function checkSidecars(
  root: IngestRoot,
  files: FoundMedia[],
): Promise<{ warnings: string[]; refused: Map<string, string> }> {
  const warnings: string[] = [];
  const refused = new Map<string, string>();
  for (const file of files) {
    const sidecar = await readSidecar(root, file.relative);
    if (sidecar.reserved.length) {
      refused.set(file.relative, `The sidecar uses reserved metadata keys: ${sidecar.reserved.join(', ')}`);
    }
    warnings.push(...sidecar.warnings);
  }
  return { warnings, refused };
}

/**
 * Splits the files into those to ingest and those already embedded (identical content owned by an existing video).
 * With store_copy the whole request is refused (409) instead, as for upload/batch.
 */
async function withoutEmbedded(
  services: DataprepServices,
  files: FoundMedia[],
  storeCopy: boolean,
): Promise<{ toIngest: FoundMedia[]; embedded: string[] }> {
  if (services.config.allowDuplicateUploads) return { toIngest: files, embedded: [] };
  const toIngest: FoundMedia[] = [];
  const embedded: string[] = [];
  for (const file of files) {
    const owner = await liveContentOwner(services, await sha256OfFile(file.real));
    if (!owner) toIngest.push(file);
    else if (storeCopy)
      throw new HttpError(409, `${file.relative}: ${duplicateMessage(owner.bucket_name, owner.video_id)}`);
    else embedded.push(file.relative);
  }
  return { toIngest, embedded };
}

/** The body of POST /media/ingest-dir as validated (defaults applied). */
interface IngestDirBody {
  dir_path: string;
  recursive: boolean;
  bucket_name?: string;
  frame_interval: number;
  enable_object_detection: boolean;
  detection_confidence: number;
  store_copy: boolean;
  tags: string[];
  /** Checked by checkUserMetadata (keys, values, reserved names), not by the schema. */
  metadata: Record<string, unknown>;
}

/** POST /media/ingest-dir: ingests the media files of a directory below the ingest data root as one job. */
export function ingestDirectoryRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/media/ingest-dir',
    summary: 'Ingest every video and image of a directory below the ingest data root',
    description:
      "Paths are resolved to real paths and must stay below MM_DATAPREP_INGEST_DATA_ROOT (symlinks leading out are skipped). `meta/` directories are never ingested; `meta/<file>.json` sidecars add tags and metadata (the sidecar wins over the request). With store_copy=false files are referenced in place; files already embedded are skipped and named in the message. Per-item error isolation: a file whose sidecar uses a reserved metadata key, or that cannot be read or processed, ends `error` in the job while the others are ingested. Refused at submit is only a request that is itself invalid (400: invalid fields, reserved keys in the request's own `metadata`, a path outside the root or not a directory, no supported media, too many files) and, with store_copy and duplicates disallowed, a file identical to ingested media (409, as the contract says).",
    tags: ['jobs'],
    request: {
      body: Joi.object<IngestDirBody, true>({
        dir_path: Joi.string().max(4096).required(),
        recursive: Joi.boolean().default(false),
        bucket_name: bucketName(),
        frame_interval: Joi.number().integer().min(1).max(100_000).default(15),
        enable_object_detection: enableObjectDetection(),
        detection_confidence: detectionConfidence(),
        store_copy: Joi.boolean().default(true),
        tags: bodyTags(),
        metadata: Joi.object().unknown(true).default({}),
      }),
    },
    responses: {
      202: {
        description: 'Job accepted',
        schema: jobAcceptedSchema().keys({ warnings: Joi.array().items(Joi.string()) }),
      },
      200: { description: 'Every file is already embedded: nothing to do', schema: statusMessage() },
      400: {
        description:
          'Invalid parameters, a path outside the root, no media, a reserved key in metadata, too many files',
        schema: errorBody(),
      },
      409: {
        description: 'A file is identical to ingested media (store_copy=true, duplicates disallowed)',
        schema: errorBody(),
      },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const body = ctx.state.body;
      const root = services.ingestRoot;
      if (!root) throw new HttpError(400, 'Directory ingest is not enabled: MM_DATAPREP_INGEST_DATA_ROOT is not set');
      const bucket = resolveTargetBucket(services, body.bucket_name);
      const requestMetadata = checkUserMetadata(body.metadata, 'metadata');
      if (requestMetadata.reserved.length) throw reservedKeysError('metadata', requestMetadata.reserved);
      const dir = await root.resolveDirectory(body.dir_path);
      const scan = await scanDirectory(root, dir, body.recursive, JOB_PATH_MAX);
      if (scan.files.length === 0) throw new HttpError(400, `No supported media files in ${body.dir_path}`);
      const sidecars = await checkSidecars(root, scan.files);
      const warnings = [...requestMetadata.warnings, ...scan.warnings, ...sidecars.warnings];
      for (const warning of warnings)
        services.logger.warn('directory ingest', { requestId: ctx.state.requestId, warning });
      const { toIngest, embedded } = await withoutEmbedded(services, scan.files, body.store_copy);
      const skippedNote = embedded.length ? `; skipped as already embedded: ${listNames(embedded)}` : '';
      if (toIngest.length === 0) {
        ctx.body = { status: 'success', message: `Nothing to ingest${skippedNote}` };
        return;
      }
      assertBatchSize(services, toIngest.length, 'files');
      const items = toIngest.map((file): IngestItem => {
        const refused = sidecars.refused.get(file.relative);
        const identifier = itemIdentifier(file.relative);
        return refused ? { identifier, refused } : { identifier, videoId: newVideoId(), path: file.relative };
      });
      assertRunnableItem(items);
      const job = await services.jobs.create({
        source: 'directory',
        bucket,
        frameInterval: body.frame_interval,
        detection: { enabled: body.enable_object_detection, confidence: body.detection_confidence },
        tags: body.tags,
        metadata: requestMetadata.metadata,
        storeCopy: body.store_copy,
        items,
      });
      answerAccepted(
        ctx,
        job,
        `Job accepted: ${counted(items.filter((i) => !i.refused).length, 'file')} of ${body.dir_path} will be ingested${skippedNote}`,
        { warnings },
      );
    },
  });
}
