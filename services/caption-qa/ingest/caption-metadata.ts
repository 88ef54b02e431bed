import Joi from 'joi';
import type { MetadataValue } from '../../lib/vectors/index.js';
import { NO_CONTROL_CHARACTERS } from '../errors.js';

/** The metadata keys with a meaning of their own (README: "Caption metadata"); any other key is an extra. */
export const KNOWN_METADATA_KEYS = [
  'result',
  'timestamp',
  'timestamp_seconds',
  'frame_id',
  'resolution',
  'img_format',
  'camera',
  'run_id',
] as const;

/** Extras kept per caption, at most; the rest are ignored (and named in the answer). */
export const MAX_EXTRA_KEYS = 32;
/** Longest extra string value kept, characters. */
export const MAX_EXTRA_CHARS = 1024;
/** Prefix of stored extras, so that no client key can overwrite a field the service relies on. */
export const EXTRA_PREFIX = 'x_';

const sourceName = (what: string) =>
  Joi.string()
    .trim()
    .min(1)
    .max(128)
    .messages({
      'string.empty': `metadata.${what} cannot be empty`,
      'string.max': `metadata.${what} is over 128 characters`,
    });

/** The joi schema of `metadata` (the known keys; extras pass through to `captionMetadata`). */
export function metadataSchema(maxCaptionChars: number): Joi.ObjectSchema<CaptionMetadataInput> {
  const resultRequired = 'metadata.result (the caption text) is required and cannot be empty';
  return (
    // Keys checked against the known fields; the extras pass unchecked (.unknown(true)).
    Joi.object<CaptionMetadataInput, true, KnownCaptionMetadata>({
      result: Joi.string()
        .trim()
        .min(1)
        .max(maxCaptionChars)
        .pattern(NO_CONTROL_CHARACTERS)
        .required()
        .messages({
          'string.pattern.base': 'metadata.result must not contain control characters',
          'any.required': resultRequired,
          'string.empty': resultRequired,
          'string.base': 'metadata.result must be a string',
          'string.max': `metadata.result is over ${maxCaptionChars} characters`,
        })
        .description('Caption text'),
      timestamp: Joi.number()
        .integer()
        .min(0)
        .unsafe()
        .description('Capture time, Unix epoch; s, ms, µs or ns told apart by magnitude. Omitted: the time received'),
      timestamp_seconds: Joi.number().min(0).description('Position in the stream, seconds (stored as is)'),
      frame_id: Joi.number().integer().min(0).description('Frame number in its stream'),
      resolution: Joi.object<CaptionResolution, true>({
        height: Joi.number()
          .integer()
          .min(1)
          .required()
          .messages({ 'any.required': 'metadata.resolution.height is required' }),
        width: Joi.number()
          .integer()
          .min(1)
          .required()
          .messages({ 'any.required': 'metadata.resolution.width is required' }),
      })
        .messages({ 'object.base': 'metadata.resolution must be an object with integer height and width' })
        .description('Frame size in pixels'),
      img_format: Joi.string().max(32).description('Image format of the frame, e.g. jpeg'),
      camera: sourceName('camera').description('Camera the caption came from (questions naming it filter by it)'),
      run_id: sourceName('run_id').description('Caption run the caption came from (questions naming it filter by it)'),
    })
      .unknown(true)
      .required()
      // Joi hands these messages down to nested keys too: every nested key that can fail so has its own.
      .messages({ 'object.base': 'metadata must be a JSON object', 'any.required': 'metadata must be a JSON object' })
      .description('Caption metadata; keys other than the listed ones are kept when scalar (see README)')
  );
}

/** Frame size in pixels. */
interface CaptionResolution {
  height: number;
  width: number;
}

/** The metadata keys with a meaning of their own, validated. */
interface KnownCaptionMetadata {
  result: string;
  timestamp?: number;
  timestamp_seconds?: number;
  frame_id?: number;
  resolution?: CaptionResolution;
  img_format?: string;
  camera?: string;
  run_id?: string;
}

/** Validated `metadata`: the known keys typed, extras as sent. */
export interface CaptionMetadataInput extends KnownCaptionMetadata {
  [extra: string]: unknown;
}

/** A caption as stored: what retrieval filters and shows, and the metadata record. */
export interface CaptionFields {
  text: string;
  /** Capture time, Unix milliseconds. */
  timestamp: number;
  camera?: string;
  runId?: string;
  frameId?: number;
  metadata: Record<string, MetadataValue>;
  /** Extra keys that were not kept (not scalar, too long, too many). */
  ignored: string[];
}

/**
 * Unix milliseconds from an epoch timestamp in seconds, milliseconds, microseconds or nanoseconds, told apart by
 * magnitude (pipelines send all four); correct for any time between 1973 and 5138.
 */
export function epochMillis(value: number): number {
  if (value < 1e11) return Math.round(value * 1000);
  if (value < 1e14) return Math.round(value);
  if (value < 1e17) return Math.round(value / 1e3);
  return Math.round(value / 1e6);
}

function keptExtra(value: unknown): MetadataValue | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') return value.length <= MAX_EXTRA_CHARS ? value : undefined;
  return undefined;
}

/** The stored fields of a validated caption, received at `receivedAt` (Unix ms). */
export function captionFields(input: CaptionMetadataInput, receivedAt: number): CaptionFields {
  const timestamp = input.timestamp === undefined ? receivedAt : epochMillis(input.timestamp);
  const metadata: Record<string, MetadataValue> = {
    kind: 'caption',
    text: input.result,
    timestamp,
    received_at: receivedAt,
  };
  if (input.timestamp_seconds !== undefined) metadata.timestamp_seconds = input.timestamp_seconds;
  if (input.frame_id !== undefined) metadata.frame_id = input.frame_id;
  if (input.resolution) {
    metadata.width = input.resolution.width;
    metadata.height = input.resolution.height;
  }
  if (input.img_format !== undefined) metadata.img_format = input.img_format;
  if (input.camera !== undefined) metadata.camera = input.camera;
  if (input.run_id !== undefined) metadata.run_id = input.run_id;
  const ignored: string[] = [];
  let extras = 0;
  for (const [key, value] of Object.entries(input)) {
    if ((KNOWN_METADATA_KEYS as readonly string[]).includes(key)) continue;
    const kept = extras < MAX_EXTRA_KEYS ? keptExtra(value) : undefined;
    if (kept === undefined) {
      ignored.push(key);
      continue;
    }
    metadata[`${EXTRA_PREFIX}${key}`] = kept;
    extras++;
  }
  return {
    text: input.result,
    timestamp,
    camera: input.camera,
    runId: input.run_id,
    frameId: input.frame_id,
    metadata,
    ignored,
  };
}
