import Joi from 'joi';
import {
  defineRoute,
  requestSignal,
  type RouteContext,
  type RouteSpec,
  type Undeclared,
} from '../../lib/http/index.js';
import { AnalysisError, errorBodySchema } from '../errors.js';
import type { AnalysisRequest, FrameAnalyzer } from '../analysis/frame-analyzer.js';
import { decodeFrame, FrameRejection } from '../frames/decode-frame.js';
import { FRAMES_FIELD, isMultipartForm, readAnalyzeForm, type FormLimits } from '../frames/read-form.js';
import type { Pattern } from '../patterns/pattern.js';

/** Time between frames when the client sends no timestamps (about 30 frames per second). */
export const DEFAULT_FRAME_SPACING_MS = 33;

/** What the analysis route needs. */
export interface AnalyzeRouteDeps {
  analyzer: FrameAnalyzer;
  patterns: Pattern[];
  limits: FormLimits & { maxFramePixels: number };
  /** Frames are decoded to fit this square: the pose model's input size. */
  analysisSide: number;
  vlmEnabledByDefault: boolean;
}

const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The text fields of an analysis form, as validated. */
interface AnalyzeFields {
  entity_id: string;
  pattern_id?: string;
  vlm_enabled?: boolean;
  request_id?: string;
  timestamps_ms?: string;
}

const fieldsSchema = Joi.object<AnalyzeFields, true>({
  entity_id: Joi.string().trim().min(1).max(256).required().description('Unique entity identifier'),
  pattern_id: Joi.string().trim().min(1).max(64).description('Pattern to detect; omitted: every enabled pattern runs'),
  vlm_enabled: Joi.boolean()
    .truthy('1', 'yes', 'on')
    .falsy('0', 'no', 'off')
    .description('Overrides the configured VLM default'),
  request_id: Joi.string()
    .pattern(SAFE_ID)
    .description('Tracking id for logs (letters, digits, ".", "_", "-"; at most 128); generated when omitted'),
  timestamps_ms: Joi.string()
    .max(16 * 1024)
    .description(
      'Capture time of each frame in milliseconds, in submission order: a JSON array or a comma-separated list, one ' +
        'number per submitted frame, never decreasing. Omitted: frames are 33 ms apart.',
    ),
}).unknown(true);

const responseSchema = Joi.object({
  entity_id: Joi.string().required(),
  status: Joi.string().valid('pose_not_detected', 'no_match', 'suspicious').required(),
  pose_detected: Joi.boolean().required(),
  frames_submitted: Joi.number().integer().required(),
  confidence: Joi.number().allow(null).required(),
  message: Joi.string().required(),
  vlm_confirmed: Joi.boolean().allow(null).required(),
  vlm_reasoning: Joi.string().allow(null).required(),
}).label('AnalyzeDirectResponse');

function validationError(message: string): AnalysisError {
  return new AnalysisError(422, 'VALIDATION_ERROR', message);
}

/** Parses `timestamps_ms` for `count` frames; throws a 422 naming the problem. */
function parseTimestamps(raw: string, count: number): number[] {
  const text = raw.trim();
  let values: unknown;
  try {
    values = text.startsWith('[') ? JSON.parse(text) : text.split(',').map((part) => Number(part.trim()));
  } catch {
    throw validationError('timestamps_ms must be a JSON array or a comma-separated list of numbers');
  }
  if (!Array.isArray(values) || !values.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw validationError('timestamps_ms must be a JSON array or a comma-separated list of numbers');
  }
  if (values.length !== count) {
    throw validationError(`timestamps_ms has ${values.length} values for ${count} submitted frames`);
  }
  if (values.some((v, i) => i > 0 && v < values[i - 1])) throw validationError('timestamps_ms must not decrease');
  return values as number[];
}

/** Validates the text fields; one 422 names every invalid field. */
function readFields(fields: Record<string, string>): AnalyzeFields {
  const { value, error } = fieldsSchema.validate(fields, { abortEarly: false, convert: true });
  if (error) throw validationError(error.details.map((d) => d.message).join('; '));
  return value;
}

function choosePatterns(all: Pattern[], id: string | undefined): Pattern[] {
  if (id === undefined) return all.filter((pattern) => pattern.enabled);
  const pattern = all.find((p) => p.id === id);
  if (!pattern) {
    throw new AnalysisError(
      422,
      'UNKNOWN_PATTERN',
      `Unknown pattern_id "${id}"; known patterns: ${all.map((p) => p.id).join(', ')}`,
    );
  }
  return [pattern];
}

/** POST /analyze/batch: the contract's multipart endpoint. */
export function analyzeRoute(deps: AnalyzeRouteDeps): RouteSpec {
  const handle = async (ctx: RouteContext<Undeclared, Undeclared, Undeclared>) => {
    if (!isMultipartForm(ctx.req)) {
      throw new AnalysisError(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body must be multipart/form-data');
    }
    const signal = requestSignal(ctx);
    const form = await readAnalyzeForm(ctx.req, deps.limits, signal);
    const fields = readFields(form.fields);
    if (fields.request_id) {
      ctx.state.requestId = fields.request_id;
      ctx.set('X-Request-Id', fields.request_id);
    }
    const patterns = choosePatterns(deps.patterns, fields.pattern_id);
    if (form.frames.length === 0) {
      throw new AnalysisError(400, 'NO_FRAMES_PROVIDED', `No frames in the request (form field "${FRAMES_FIELD}")`);
    }
    const times = fields.timestamps_ms
      ? parseTimestamps(fields.timestamps_ms, form.frames.length)
      : form.frames.map((_, i) => i * DEFAULT_FRAME_SPACING_MS);
    const request: AnalysisRequest = {
      entityId: fields.entity_id,
      patterns,
      vlmEnabled: fields.vlm_enabled ?? deps.vlmEnabledByDefault,
      timestamped: fields.timestamps_ms !== undefined,
      // Every frame starts decoding now (libvips threads); the model takes them in order as they become ready.
      frames: form.frames.map((frame, i) => ({
        bytes: frame.bytes,
        timeMs: times[i],
        decoded: frame.bytes
          ? decodeFrame(frame.bytes, deps.limits.maxFramePixels, deps.analysisSide)
          : Promise.resolve({ ok: false, reason: FrameRejection.tooLarge(deps.limits.maxFrameBytes) }),
      })),
    };
    ctx.body = await deps.analyzer.analyze(request, ctx.state.requestId, signal);
  };

  return defineRoute({
    method: 'post',
    path: '/analyze/batch',
    summary: 'Analyse several frames of one entity: poses, a behaviour pattern, optional VLM confirmation',
    tags: ['analysis'],
    request: {
      // append (keys() for a non-empty map) takes keys beyond AnalyzeFields: the files are read apart from the fields.
      multipart: fieldsSchema.append<AnalyzeFields & { [FRAMES_FIELD]: unknown[] }>({
        [FRAMES_FIELD]: Joi.array()
          .items(Joi.any().meta({ swaggerType: 'file', contentType: 'image/jpeg, image/png, image/webp' }))
          .required()
          .description('One or more JPEG, PNG or WebP images, at most 5 MB each, in time order'),
      }),
    },
    responses: {
      200: { description: 'Analysis result (including no_match and pose_not_detected)', schema: responseSchema },
      400: { description: 'NO_FRAMES_PROVIDED: no frames in the request', schema: errorBodySchema },
      413: { description: 'TOO_MANY_FRAMES or REQUEST_TOO_LARGE', schema: errorBodySchema },
      415: { description: 'UNSUPPORTED_MEDIA_TYPE: not multipart/form-data', schema: errorBodySchema },
      422: {
        description:
          'INVALID_FRAMES (no valid frame; invalid_frames lists [index, reason]), VALIDATION_ERROR, UNKNOWN_PATTERN',
        schema: errorBodySchema,
      },
      500: { description: 'INTERNAL_ERROR: message starts with "Analysis failed: "', schema: errorBodySchema },
    },
    handler: async (ctx) => {
      try {
        await handle(ctx);
      } catch (error) {
        // Unread body left behind (limits, early errors) is settled by the HTTP kit after the answer.
        if (!(error instanceof AnalysisError)) throw error;
        ctx.status = error.status;
        ctx.body = error.body();
      }
    },
  });
}
