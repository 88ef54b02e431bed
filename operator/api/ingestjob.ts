import { Type, type Static } from '@sinclair/typebox';
import { conditionsSchema, observedGenerationSchema, type ArgusResource } from './meta.js';
import { freeFormObject, stringEnum, strictObject, timestamp } from './schema-helpers.js';

/**
 * Name of the worker that runs an IngestJob's items (`argus worker ingest` in the cluster, the registered worker
 * embedded): the contract between the kind, the controller that asks for it and the service that implements it.
 */
export const INGEST_WORKER = 'ingest';
/** How the items of a job reached Argus. */
export const INGEST_SOURCES = ['upload_batch', 'batch_existing', 'image_batch', 'directory'] as const;
/** The six documented job states. */
export const INGEST_STATES = [
  'pending',
  'running',
  'completed',
  'completed_with_errors',
  'failed',
  'cancelled',
] as const;
/** States a job never leaves. */
export const TERMINAL_INGEST_STATES: readonly IngestState[] = [
  'completed',
  'completed_with_errors',
  'failed',
  'cancelled',
];
/** Most items one IngestJob may hold (etcd's object size bound; MM_DATAPREP_BATCH_MAX_ITEMS may only lower it). */
export const INGEST_MAX_ITEMS = 500;
/** Longest per-item message kept in status (the object must stay well under etcd's 1.5 MiB). */
export const ITEM_MESSAGE_MAX = 512;
/** Longest item identifier (a file name or label; a longer one is cut by the service). */
export const ITEM_IDENTIFIER_MAX = 512;
/** Longest video_id (dataprep's video ids: a letter or digit, then up to 127 of letters, digits, `_`, `-`). */
export const VIDEO_ID_MAX = 128;
/** Longest image URL an image_batch item may carry. */
export const ITEM_URL_MAX = 2048;
/**
 * Largest serialised IngestJob a service may create. etcd refuses requests over 1.5 MiB; status (item results, at most
 * ITEM_MESSAGE_MAX characters of message each) needs room beside the spec.
 */
export const INGEST_SPEC_MAX_BYTES = 768 * 1024;

export const ingestItemSchema = strictObject(
  {
    identifier: Type.String({
      description: 'What the user calls the item: a file name, a video_id or an item label. Reported back as is.',
      minLength: 1,
      maxLength: ITEM_IDENTIFIER_MAX,
    }),
    videoId: Type.Optional(
      Type.String({
        description: 'The video directory in the bucket, when it is known up front.',
        maxLength: VIDEO_ID_MAX,
      }),
    ),
    key: Type.Optional(
      Type.String({
        description: 'Object key of media already in storage (upload_batch, image_batch).',
        maxLength: 1024,
      }),
    ),
    url: Type.Optional(
      Type.String({ description: 'http(s) URL of an image to download (image_batch).', maxLength: ITEM_URL_MAX }),
    ),
    path: Type.Optional(
      Type.String({
        description: 'Path of a file relative to the ingest data root (directory); re-validated by the worker.',
        maxLength: 1024,
      }),
    ),
    refused: Type.Optional(
      Type.String({
        description:
          'Why the service refused this item when the job was submitted (undecodable or unsupported content): the worker reports it as an error without running it, and the other items run.',
        maxLength: ITEM_MESSAGE_MAX,
      }),
    ),
  },
  'One media item of the job.',
);

export const ingestJobSpecSchema = strictObject(
  {
    source: stringEnum(
      INGEST_SOURCES,
      'How the items reached Argus: upload_batch (files already stored), batch_existing (videos already in the bucket), image_batch (base64 images already stored or URLs to download), directory (files below the ingest root).',
    ),
    bucket: Type.String({ description: 'Bucket the media is stored in.', minLength: 3, maxLength: 63 }),
    frameInterval: Type.Integer({ description: 'Embed every Nth frame of a video.', minimum: 1, maximum: 100000 }),
    detection: strictObject(
      {
        enabled: Type.Boolean({ description: 'Embed each detected object crop as its own entry.' }),
        confidence: Type.Number({ description: 'Minimum detection score of a crop.', minimum: 0.1, maximum: 1 }),
      },
      'Object detection settings.',
    ),
    tags: Type.Array(Type.String({ description: 'A tag.', maxLength: 256 }), {
      description: 'Tags stored with every embedding, for filtering searches.',
      maxItems: 64,
    }),
    metadata: Type.Optional(
      freeFormObject('User metadata stored as top-level filterable fields (directory ingest; values already checked).'),
    ),
    storeCopy: Type.Boolean({
      description:
        'directory: copy each file into storage (true) or reference it in place on the ingest mount (false).',
    }),
    items: Type.Array(ingestItemSchema, {
      description: 'The media items, processed in order; bounded by MM_DATAPREP_BATCH_MAX_ITEMS.',
      minItems: 1,
      maxItems: INGEST_MAX_ITEMS,
    }),
    cancelRequested: Type.Optional(
      Type.Boolean({ description: 'Set to stop the job cooperatively: items not yet started become skipped.' }),
    ),
    pendingDeadlineSeconds: Type.Optional(
      Type.Integer({
        description:
          'Seconds the job may wait for its first worker to run (pods not scheduled, image not pulled, pods refused); then it fails naming what the workers waited for. Default: the operator setting ARGUS_INGEST_PENDING_DEADLINE_SECONDS.',
        minimum: 1,
        maximum: 604800,
      }),
    ),
  },
  'What to ingest and how.',
);

export const ingestItemResultSchema = strictObject(
  {
    index: Type.Integer({ description: 'Position of the item in spec.items.', minimum: 0 }),
    identifier: Type.String({ description: 'The item identifier from spec.items.', maxLength: ITEM_IDENTIFIER_MAX }),
    videoId: Type.Optional(
      Type.String({ description: 'The video directory the item was stored as.', maxLength: VIDEO_ID_MAX }),
    ),
    status: stringEnum(['success', 'error', 'skipped'] as const, 'Outcome of the item.'),
    message: Type.Optional(
      Type.String({ description: 'Why the item failed or was skipped.', maxLength: ITEM_MESSAGE_MAX }),
    ),
    embeddingsCount: Type.Optional(
      Type.Integer({ description: 'Embeddings stored for the item (successes).', minimum: 0 }),
    ),
  },
  'The result of one item.',
);

export const ingestJobStatusSchema = strictObject(
  {
    state: Type.Optional(
      stringEnum(
        INGEST_STATES,
        'Where the job is: pending, running, completed, completed_with_errors, failed or cancelled.',
      ),
    ),
    total: Type.Optional(Type.Integer({ description: 'Items in the job.', minimum: 0 })),
    completed: Type.Optional(Type.Integer({ description: 'Items that succeeded.', minimum: 0 })),
    failed: Type.Optional(Type.Integer({ description: 'Items that failed.', minimum: 0 })),
    skipped: Type.Optional(Type.Integer({ description: 'Items skipped (cancellation).', minimum: 0 })),
    progress: Type.Optional(
      Type.String({ description: 'Items done of the total, as "done/total" (for kubectl get).', maxLength: 32 }),
    ),
    items: Type.Optional(
      Type.Array(ingestItemResultSchema, {
        description: 'One result per finished item, keyed by index.',
        maxItems: INGEST_MAX_ITEMS,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['index'],
      }),
    ),
    conditions: conditionsSchema(),
    observedGeneration: observedGenerationSchema(),
    startTime: Type.Optional(timestamp('When the first worker started.')),
    completionTime: Type.Optional(timestamp('When the job reached a terminal state.')),
  },
  'What the job has done so far.',
);

export type IngestSource = (typeof INGEST_SOURCES)[number];
export type IngestState = (typeof INGEST_STATES)[number];
export type IngestItem = Static<typeof ingestItemSchema>;
export type IngestItemResult = Static<typeof ingestItemResultSchema>;
export type IngestJobSpec = Static<typeof ingestJobSpecSchema>;
export type IngestJobStatus = Static<typeof ingestJobStatusSchema>;

/** A batch of media to embed (`kubectl get ingestjobs`). */
export type IngestJob = ArgusResource<'IngestJob', IngestJobSpec, IngestJobStatus>;
