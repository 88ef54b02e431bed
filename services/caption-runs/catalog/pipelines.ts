import type { CaptionPipelineType } from '../../../operator/api/index.js';

/** A pipeline configuration, as `GET /api/pipelines` lists it. */
export interface PipelineInfo {
  pipeline_name: string;
  pipeline_display_name: string;
  pipeline_type: CaptionPipelineType;
}

/** The captioner that needs no model server: captions built from the detector's findings. */
export const OFFLINE_CAPTIONER = 'offline-detection-captioner';

/** Pipeline without a detector: each chunk's frame goes to the captioner as it is (needs a VLM). */
export const VLM_PIPELINE = 'vlm_captioning';
/** Pipeline with the detector before the captioner: detections are published, alert on labels, offline captions. */
export const DETECTION_PIPELINE = 'detection_captioning';

/** Every pipeline a run may name: at least one of each type. */
export const PIPELINES: readonly PipelineInfo[] = Object.freeze([
  { pipeline_name: VLM_PIPELINE, pipeline_display_name: 'VLM captioning', pipeline_type: 'non-detection' },
  {
    pipeline_name: DETECTION_PIPELINE,
    pipeline_display_name: 'Object detection, then captioning',
    pipeline_type: 'detection',
  },
]);

/** The pipeline called `name`, or undefined. */
export function findPipeline(name: string): PipelineInfo | undefined {
  return PIPELINES.find((pipeline) => pipeline.pipeline_name === name);
}

/** The first pipeline of `type`. */
export function pipelineOfType(type: CaptionPipelineType): PipelineInfo {
  return PIPELINES.find((pipeline) => pipeline.pipeline_type === type)!;
}
