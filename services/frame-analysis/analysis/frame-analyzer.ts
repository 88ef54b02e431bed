import type { MultiPoseEstimator, RgbImage } from '../../lib/inference/index.js';
import type { Logger } from '../../lib/log/index.js';
import { AnalysisError, ANALYSIS_FAILED_PREFIX, type InvalidFrame } from '../errors.js';
import type { DecodedFrame } from '../frames/decode-frame.js';
import type { Pattern } from '../patterns/pattern.js';
import { mostConfident, type PatternResult } from '../patterns/evaluate.js';
import { trackEntity, type FramePoses } from '../poses/track-entity.js';
import type { VlmConfirmer } from '../vlm/vlm-confirmer.js';
import type { AnalysisMetrics } from './analysis-metrics.js';

/** The contract's AnalyzeDirectResponse. */
export interface AnalyzeDirectResponse {
  entity_id: string;
  status: 'pose_not_detected' | 'no_match' | 'suspicious';
  pose_detected: boolean;
  frames_submitted: number;
  confidence: number | null;
  message: string;
  vlm_confirmed: boolean | null;
  vlm_reasoning: string | null;
}

/** One submitted frame on its way: its decoding (started by the caller), original bytes and time. */
export interface PendingFrame {
  decoded: Promise<DecodedFrame>;
  bytes?: Buffer;
  timeMs: number;
}

/** One validated request. */
export interface AnalysisRequest {
  entityId: string;
  /** The patterns to run (one when the client named it, else every enabled one). */
  patterns: Pattern[];
  vlmEnabled: boolean;
  frames: PendingFrame[];
  /** Whether frame times came from the client (some patterns need real times). */
  timestamped: boolean;
}

/** What the analyzer needs: the pose model, how sure a person must be, and the optional VLM. */
export interface FrameAnalyzerDeps {
  estimator: MultiPoseEstimator;
  minPersonScore: number;
  vlm?: VlmConfirmer;
  logger: Logger;
  metrics?: AnalysisMetrics;
}

/** Something in the analysis failed unexpectedly; `summary` is safe to show, the cause is only logged. */
class AnalysisStepFailed extends Error {
  constructor(
    readonly summary: string,
    readonly failure: unknown,
  ) {
    super(summary);
  }
}

const round3 = (x: number) => Number(x.toFixed(3));

/**
 * Runs one analysis: poses on every valid frame (the model runs frame by frame while later frames still decode), the
 * entity followed across frames, the patterns evaluated, and the VLM asked when a pattern matched and it is enabled.
 */
export class FrameAnalyzer {
  constructor(private readonly deps: FrameAnalyzerDeps) {}

  /** Whether a VLM is configured. */
  get vlmConfigured(): boolean {
    return this.deps.vlm !== undefined;
  }

  /** Answers the request; throws AnalysisError (422 when no frame is valid, 500 on failures). */
  async analyze(request: AnalysisRequest, requestId: string, signal?: AbortSignal): Promise<AnalyzeDirectResponse> {
    try {
      return inContractOrder(await this.run(request, requestId, signal));
    } catch (error) {
      if (!(error instanceof AnalysisStepFailed)) throw error;
      const cause = error.failure as Error | undefined;
      this.deps.logger.error('analysis failed', {
        requestId,
        step: error.summary,
        error: cause?.message,
        stack: cause?.stack,
      });
      throw new AnalysisError(500, 'INTERNAL_ERROR', `${ANALYSIS_FAILED_PREFIX}${error.summary}`);
    }
  }

  private async run(request: AnalysisRequest, requestId: string, signal?: AbortSignal): Promise<AnalyzeDirectResponse> {
    const invalid: InvalidFrame[] = [];
    const seen: FramePoses[] = [];
    const validBytes: Buffer[] = [];
    for (const [index, frame] of request.frames.entries()) {
      const decoded = await frame.decoded;
      if (!decoded.ok) {
        invalid.push([index, decoded.reason]);
        continue;
      }
      signal?.throwIfAborted();
      seen.push({ index, timeMs: frame.timeMs, poses: await this.estimate(decoded.image) });
      validBytes.push(frame.bytes!);
    }
    this.deps.metrics?.framesSeen(seen.length, invalid.length);
    if (seen.length === 0) {
      throw new AnalysisError(422, 'INVALID_FRAMES', 'No valid frame could be decoded', invalid);
    }
    if (invalid.length > 0) this.deps.logger.info('frames skipped', { requestId, invalid_frames: invalid });
    const base = {
      entity_id: request.entityId,
      frames_submitted: seen.length,
      vlm_confirmed: null,
      vlm_reasoning: null,
    };
    if (!seen.some((frame) => frame.poses.length > 0)) {
      this.deps.metrics?.result('pose_not_detected', undefined);
      return {
        ...base,
        status: 'pose_not_detected',
        pose_detected: false,
        confidence: null,
        message: `No pose detected in any of the ${seen.length} frames`,
      };
    }
    const entity = trackEntity(seen);
    const result = mostConfident(request.patterns, entity, request.timestamped);
    if (!result) {
      this.deps.metrics?.result('no_match', undefined);
      return { ...base, status: 'no_match', pose_detected: true, confidence: null, message: 'No pattern is enabled' };
    }
    const answer = await this.withVlm(result, base, request, validBytes, requestId, signal);
    this.deps.metrics?.result(answer.status, result.pattern.id);
    return answer;
  }

  /** The pattern's answer, confirmed or rejected by the VLM when it matched and the VLM path is on. */
  private async withVlm(
    result: PatternResult,
    base: Pick<AnalyzeDirectResponse, 'entity_id' | 'frames_submitted' | 'vlm_confirmed' | 'vlm_reasoning'>,
    request: AnalysisRequest,
    validBytes: Buffer[],
    requestId: string,
    signal?: AbortSignal,
  ): Promise<AnalyzeDirectResponse> {
    const poseAnswer: AnalyzeDirectResponse = {
      ...base,
      status: result.matched ? 'suspicious' : 'no_match',
      pose_detected: true,
      confidence: result.confidence,
      message: describe(result, request.patterns.length > 1),
    };
    if (!result.matched || !request.vlmEnabled) return poseAnswer;
    if (!this.deps.vlm) {
      return { ...poseAnswer, vlm_reasoning: 'VLM confirmation was asked for, but no VLM is configured' };
    }
    const outcome = await this.deps.vlm.confirm(
      {
        patternId: result.pattern.id,
        description: result.pattern.description,
        evidence: result.reason,
        frames: validBytes,
      },
      requestId,
      signal,
    );
    this.deps.metrics?.vlm(
      outcome.kind === 'unavailable' ? 'unavailable' : outcome.verdict.confirmed ? 'confirmed' : 'rejected',
    );
    if (outcome.kind === 'unavailable') return { ...poseAnswer, vlm_reasoning: outcome.reason };
    const { verdict } = outcome;
    if (verdict.confirmed) {
      return {
        ...poseAnswer,
        confidence: round3((result.confidence + verdict.confidence) / 2),
        message: `${poseAnswer.message}; confirmed by the VLM`,
        vlm_confirmed: true,
        vlm_reasoning: verdict.reasoning,
      };
    }
    return {
      ...poseAnswer,
      status: 'no_match',
      confidence: round3(result.confidence * 0.5),
      message: `${poseAnswer.message}; the VLM did not confirm it`,
      vlm_confirmed: false,
      vlm_reasoning: verdict.reasoning,
    };
  }

  private async estimate(image: RgbImage) {
    try {
      return await this.deps.estimator.estimate(image, this.deps.minPersonScore);
    } catch (error) {
      throw new AnalysisStepFailed('pose estimation failed', error);
    }
  }
}

/** The response message: which pattern, its confidence against its threshold, and what was seen. */
function describe(result: PatternResult, chosenAmongSeveral: boolean): string {
  const { pattern, confidence, reason } = result;
  const score = `confidence ${confidence} ${result.matched ? '>=' : '<'} threshold ${pattern.threshold}`;
  if (result.matched) return `Pattern "${pattern.id}" detected (${score}): ${reason}`;
  const prefix = chosenAmongSeveral
    ? `No pattern matched; the most confident was "${pattern.id}"`
    : `Pattern "${pattern.id}" not detected`;
  return `${prefix} (${score}): ${reason}`;
}

/** The response with its fields in the contract's order. */
function inContractOrder(r: AnalyzeDirectResponse): AnalyzeDirectResponse {
  return {
    entity_id: r.entity_id,
    status: r.status,
    pose_detected: r.pose_detected,
    frames_submitted: r.frames_submitted,
    confidence: r.confidence,
    message: r.message,
    vlm_confirmed: r.vlm_confirmed,
    vlm_reasoning: r.vlm_reasoning,
  };
}
