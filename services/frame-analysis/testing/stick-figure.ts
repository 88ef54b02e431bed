import sharp from 'sharp';
import { COCO_KEYPOINT_NAMES, type Keypoint, type Pose } from '../../lib/inference/index.js';

/** A body as 2-D points per COCO keypoint name (pixels of the canvas). */
export type Skeleton = Record<(typeof COCO_KEYPOINT_NAMES)[number], [number, number]>;

/** Limbs drawn between keypoints, with their colours (clothes on the body, skin on the forearms). */
const LIMBS: Array<[keyof Skeleton, keyof Skeleton, string, number]> = [
  ['left_shoulder', 'right_shoulder', '#1f4e9c', 26],
  ['left_hip', 'right_hip', '#333333', 26],
  ['left_shoulder', 'left_hip', '#1f4e9c', 30],
  ['right_shoulder', 'right_hip', '#1f4e9c', 30],
  ['left_shoulder', 'left_elbow', '#1f4e9c', 18],
  ['right_shoulder', 'right_elbow', '#1f4e9c', 18],
  ['left_elbow', 'left_wrist', '#e0ac69', 14],
  ['right_elbow', 'right_wrist', '#e0ac69', 14],
  ['left_hip', 'left_knee', '#333333', 22],
  ['right_hip', 'right_knee', '#333333', 22],
  ['left_knee', 'left_ankle', '#333333', 18],
  ['right_knee', 'right_ankle', '#333333', 18],
];

/**
 * A standing figure facing the camera, `height` pixels tall with its feet at (`x`, `feetY`); arms hang down. The
 * figure's left is the image's right, as a person facing the camera.
 */
export function standing(x: number, feetY: number, height = 400): Skeleton {
  const u = height / 8; // head-heights
  const at = (dx: number, dy: number): [number, number] => [x + dx * u, feetY - dy * u];
  return {
    nose: at(0, 7.5),
    left_eye: at(0.15, 7.65),
    right_eye: at(-0.15, 7.65),
    left_ear: at(0.35, 7.55),
    right_ear: at(-0.35, 7.55),
    left_shoulder: at(0.9, 6.6),
    right_shoulder: at(-0.9, 6.6),
    left_elbow: at(1.1, 5.2),
    right_elbow: at(-1.1, 5.2),
    left_wrist: at(1.15, 3.9),
    right_wrist: at(-1.15, 3.9),
    left_hip: at(0.6, 4),
    right_hip: at(-0.6, 4),
    left_knee: at(0.65, 2),
    right_knee: at(-0.65, 2),
    left_ankle: at(0.7, 0.1),
    right_ankle: at(-0.7, 0.1),
  };
}

/** The skeleton with some points moved (e.g. a wrist raised to a shelf). */
export function withPoints(skeleton: Skeleton, points: Partial<Skeleton>): Skeleton {
  return { ...skeleton, ...points };
}

/** Every point rotated by `degrees` (clockwise on screen) around `centre`: a body tipping over. */
export function rotated(skeleton: Skeleton, degrees: number, centre: [number, number]): Skeleton {
  const r = (degrees * Math.PI) / 180;
  const [cx, cy] = centre;
  const out = {} as Skeleton;
  for (const name of COCO_KEYPOINT_NAMES) {
    const [x, y] = skeleton[name];
    out[name] = [
      cx + (x - cx) * Math.cos(r) - (y - cy) * Math.sin(r),
      cy + (x - cx) * Math.sin(r) + (y - cy) * Math.cos(r),
    ];
  }
  return out;
}

/** Every point moved by (dx, dy). */
export function shifted(skeleton: Skeleton, dx: number, dy: number): Skeleton {
  const out = {} as Skeleton;
  for (const name of COCO_KEYPOINT_NAMES) out[name] = [skeleton[name][0] + dx, skeleton[name][1] + dy];
  return out;
}

/** The skeleton as the pose the model would report with full confidence (box around the points). */
export function poseOf(skeleton: Skeleton, score = 0.9): Pose {
  const keypoints: Keypoint[] = COCO_KEYPOINT_NAMES.map((name) => ({
    name,
    x: skeleton[name][0],
    y: skeleton[name][1],
    score,
  }));
  const xs = keypoints.map((k) => k.x);
  const ys = keypoints.map((k) => k.y);
  return { keypoints, box: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)], score };
}

/** SVG of the figure on a plain background: limbs as thick round strokes, a head, a face. */
export function stickFigureSvg(skeleton: Skeleton, width: number, height: number): string {
  const lines = LIMBS.map(([a, b, colour, w]) => {
    const [x1, y1] = skeleton[a];
    const [x2, y2] = skeleton[b];
    return `<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="${colour}" stroke-width="${w}" stroke-linecap="round"/>`;
  });
  const [nx, ny] = skeleton.nose;
  const [lx, ly] = skeleton.left_shoulder;
  const [rx, ry] = skeleton.right_shoulder;
  const headR = Math.hypot(lx - rx, ly - ry) * 0.32;
  const dot = (name: keyof Skeleton, r: number, colour: string) =>
    `<circle cx="${skeleton[name][0]}" cy="${skeleton[name][1]}" r="${r}" fill="${colour}"/>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
<rect width="100%" height="100%" fill="#d8d2c4"/>
<line x1="${(lx + rx) / 2}" y1="${(ly + ry) / 2}" x2="${nx}" y2="${ny}" stroke="#e0ac69" stroke-width="16"/>
${lines.join('\n')}
<circle cx="${nx}" cy="${ny - headR * 0.15}" r="${headR}" fill="#e0ac69"/>
${dot('left_eye', headR * 0.12, '#222')}${dot('right_eye', headR * 0.12, '#222')}
${dot('left_wrist', 9, '#e0ac69')}${dot('right_wrist', 9, '#e0ac69')}
</svg>`;
}

/** Renders the figure to an image file (JPEG by default) with sharp. */
export async function renderStickFigure(
  skeleton: Skeleton,
  options: { width?: number; height?: number; format?: 'jpeg' | 'png' | 'webp' } = {},
): Promise<Buffer> {
  const { width = 640, height = 480, format = 'jpeg' } = options;
  return sharp(Buffer.from(stickFigureSvg(skeleton, width, height)))
    .toFormat(format)
    .toBuffer();
}
