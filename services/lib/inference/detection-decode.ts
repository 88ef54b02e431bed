import { toSourcePoint, type InputPlacement } from './image-tensor.js';
import type { Detection } from './roles.js';

/** What decoding a detector output needs besides the tensor itself. */
export interface DecodeContext {
  placement: InputPlacement;
  sourceWidth: number;
  sourceHeight: number;
  labels: string[];
  minScore: number;
}

function clamp(value: number, max: number): number {
  return value < 0 ? 0 : value > max ? max : value;
}

function toDetection(
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  score: number,
  classId: number,
  ctx: DecodeContext,
): Detection | undefined {
  const [sx1, sy1] = toSourcePoint(x1, y1, ctx.placement);
  const [sx2, sy2] = toSourcePoint(x2, y2, ctx.placement);
  const box: Detection['box'] = [
    clamp(sx1, ctx.sourceWidth),
    clamp(sy1, ctx.sourceHeight),
    clamp(sx2, ctx.sourceWidth),
    clamp(sy2, ctx.sourceHeight),
  ];
  // Boxes lying wholly in the letterbox padding collapse to nothing once clamped.
  if (box[2] <= box[0] || box[3] <= box[1]) return undefined;
  return { label: ctx.labels[classId] ?? `class ${classId}`, classId, score, box };
}

/** Decodes `[1,N,6]` rows of x1,y1,x2,y2 (input px), score, class index; keeps rows with score ≥ minScore. */
export function decodeXyxyScoreClass(data: ArrayLike<number>, ctx: DecodeContext): Detection[] {
  const out: Detection[] = [];
  for (let row = 0; row + 6 <= data.length; row += 6) {
    const score = data[row + 4];
    const classId = data[row + 5];
    if (!(score >= ctx.minScore) || !Number.isInteger(classId) || classId < 0) continue;
    const detection = toDetection(data[row], data[row + 1], data[row + 2], data[row + 3], score, classId, ctx);
    if (detection) out.push(detection);
  }
  return out;
}

/**
 * Decodes YOLOv8 output `[1, 4+C, N]`: per anchor cx,cy,w,h (input px) then C class scores; each anchor keeps its best
 * class when that score ≥ minScore.
 */
export function decodeYolov8(data: ArrayLike<number>, dims: readonly number[], ctx: DecodeContext): Detection[] {
  if (dims.length !== 3 || dims[1] < 5) throw new Error(`yolov8 output must be [1, 4+C, N], got [${dims.join(', ')}]`);
  const channels = dims[1];
  const anchors = dims[2];
  const out: Detection[] = [];
  for (let a = 0; a < anchors; a++) {
    let best = -Infinity;
    let classId = -1;
    for (let c = 4; c < channels; c++) {
      const score = data[c * anchors + a];
      if (score > best) {
        best = score;
        classId = c - 4;
      }
    }
    if (!(best >= ctx.minScore)) continue;
    const cx = data[a];
    const cy = data[anchors + a];
    const halfW = data[2 * anchors + a] / 2;
    const halfH = data[3 * anchors + a] / 2;
    const detection = toDetection(cx - halfW, cy - halfH, cx + halfW, cy + halfH, best, classId, ctx);
    if (detection) out.push(detection);
  }
  return out;
}
