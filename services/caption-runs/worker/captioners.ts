import sharp from 'sharp';
import type { Detection } from '../../lib/inference/index.js';
import type { ChatRequest } from '../../lib/llm/index.js';
import { offlineCaption } from '../../lib/scene-description/index.js';

/** The VLM port: one whole answer to a chat request (lib/llm's ChatCompletionsClient). */
export interface VisionModel {
  readonly model: string;
  complete(request: ChatRequest, signal?: AbortSignal): Promise<string>;
}

/** What a chunk is captioned from: its frames (JPEG), the last frame's size and detections, the chunk before's. */
export interface ChunkInput {
  frames: Buffer[];
  width: number;
  height: number;
  /** The detector's findings on the chunk's last frame (empty without detection). */
  detections: Detection[];
  /** The previous chunk's detections; undefined for the first chunk of the run. */
  previousDetections?: Detection[];
}

/** Writes one caption per chunk. */
export interface Captioner {
  /** The name published as `model`. */
  readonly model: string;
  caption(input: ChunkInput, signal: AbortSignal): Promise<string>;
}

/** Captions from what the detector saw (lib/scene-description), labelled as such: no model server needed. */
export function offlineCaptioner(model: string, minScore: number): Captioner {
  return {
    model,
    caption: async (input) =>
      offlineCaption(input.detections, input.width, input.height, input.previousDetections, minScore),
  };
}

/** A JPEG no larger than `maxSide` on either side (frames are sent to the VLM as they are when small enough). */
async function fitted(jpeg: Buffer, maxSide: number, width: number, height: number): Promise<Buffer> {
  if (width <= maxSide && height <= maxSide) return jpeg;
  return sharp(jpeg).resize({ width: maxSide, height: maxSide, fit: 'inside' }).jpeg({ quality: 85 }).toBuffer();
}

/**
 * Captions with an OpenAI-compatible VLM: the run's prompt and every frame of the chunk as `image_url` data URLs, in
 * order, at most `imageMaxSide` pixels a side; `maxTokens` and `temperature` as configured.
 */
export function vlmCaptioner(
  vlm: VisionModel,
  settings: { model: string; prompt: string; maxTokens: number; temperature: number; imageMaxSide: number },
): Captioner {
  return {
    model: settings.model,
    caption: async (input, signal) => {
      const images = await Promise.all(
        input.frames.map((frame) => fitted(frame, settings.imageMaxSide, input.width, input.height)),
      );
      const answer = await vlm.complete(
        {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: settings.prompt },
                ...images.map((jpeg) => ({
                  type: 'image_url' as const,
                  image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}` },
                })),
              ],
            },
          ],
          maxTokens: settings.maxTokens,
          temperature: settings.temperature,
        },
        signal,
      );
      return answer.trim();
    },
  };
}
