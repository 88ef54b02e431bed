import { cropDetection } from '../../lib/inference/crop.js';
import type { Detection } from '../../lib/inference/roles.js';
import type { VideoFrame } from '../../lib/media/video-frames.js';
import { describeFrame, describeObject } from '../../lib/scene-description/index.js';
import type { BoundedQueue } from './bounded-queue.js';
import type { EmbedItem, PipelineRun } from './pipeline-run.js';

/** A frame whose detection has been started (its model run may still wait for the gate). */
export interface PendingDetection {
  frame: VideoFrame;
  found: Promise<Detection[]>;
}

/**
 * Starts detection on each frame as it arrives, one frame ahead of cropping: the next frame's preprocessing (a 512 px
 * resample on this thread) overlaps with the current model run instead of leaving the model idle.
 */
export async function submitStage(
  run: PipelineRun,
  frames: BoundedQueue<VideoFrame>,
  detections: BoundedQueue<PendingDetection>,
): Promise<void> {
  const { deps, detection, clock } = run;
  for (let frame = await frames.take(); frame; frame = await frames.take()) {
    run.signal.throwIfAborted();
    const image = frame.image;
    const found = detection.enabled
      ? clock.time('detect', () => deps.detector.detect(image, detection.detectMinScore, { gate: run.gates.detect }))
      : Promise.resolve([]);
    // Awaited in order by detectStage; this only keeps a failure before then from counting as unhandled.
    found.catch(() => undefined);
    await detections.push({ frame, found });
  }
}

/** Turns each frame and its detections into items to embed: the whole frame, then a crop per confident object. */
export async function detectStage(
  run: PipelineRun,
  detections: BoundedQueue<PendingDetection>,
  items: BoundedQueue<EmbedItem>,
): Promise<void> {
  const { detection } = run;
  for (let next = await detections.take(); next; next = await detections.take()) {
    run.signal.throwIfAborted();
    const { frame } = next;
    const image = frame.image;
    const found = await next.found;
    const described = detection.describe
      ? describeFrame(found, image.width, image.height, detection.descriptionMinScore)
      : undefined;
    await items.push({
      image,
      subject: {
        kind: run.isVideo ? 'frame' : 'image',
        frameId: frame.frameId,
        timestampSeconds: frame.timestampSeconds,
        labels: detection.enabled ? frameLabels(found, detection.descriptionMinScore) : undefined,
      },
      description: described && { text: described.text, positions: described.positions },
    });
    let cropId = 0;
    for (const object of found) {
      // The detector filters by minScore already; the check keeps the contract if an adapter does not.
      if (object.score < detection.confidence) continue;
      run.counts.cropsDetected++;
      await items.push({
        description: detection.describe ? { text: describeObject(object, image.width, image.height) } : undefined,
        image: cropDetection(image, object),
        subject: {
          kind: 'crop',
          frameId: frame.frameId,
          timestampSeconds: frame.timestampSeconds,
          label: object.label,
          bbox: toSourcePixels(object.box, run.sourceScale),
          cropId: cropId++,
          score: object.score,
        },
      });
    }
  }
}

function toSourcePixels(box: [number, number, number, number], scale: number): [number, number, number, number] {
  return scale === 1 ? box : [box[0] * scale, box[1] * scale, box[2] * scale, box[3] * scale];
}

/** Distinct classes detected at `minScore` or above, most frequent first. */
function frameLabels(found: Detection[], minScore: number): string[] {
  const counts = new Map<string, number>();
  for (const d of found) if (d.score >= minScore) counts.set(d.label, (counts.get(d.label) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([label]) => label);
}
