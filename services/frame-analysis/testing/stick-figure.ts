import sharp from 'sharp';
import { COCO_KEYPOINT_NAMES, type Keypoint, type Pose } from '../../lib/inference/index.js';

/** A body as 2-D points per COCO keypoint name (pixels of the canvas). */
export type Skeleton = Record<(typeof COCO_KEYPOINT_NAMES)[number], [number, number]>;

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

const SKIN = '#d9a066';
const SHIRT = '#b03a2e';
const TROUSERS = '#2b3a55';

/**
 * SVG of the figure: limbs as thick round strokes (trousers, sleeves, bare forearms), a filled torso, hands, shoes, a
 * neck and a head with hair and a face, over a wall-to-floor gradient. Flat shapes like these are found by the pose
 * model with its keypoints within a few pixels of the skeleton's (checked by the tests that use them).
 */
export function stickFigureSvg(s: Skeleton, width: number, height: number): string {
  const line = (a: keyof Skeleton, b: keyof Skeleton, colour: string, w: number) =>
    `<line x1="${s[a][0]}" y1="${s[a][1]}" x2="${s[b][0]}" y2="${s[b][1]}" stroke="${colour}" stroke-width="${w}" ` +
    'stroke-linecap="round"/>';
  const torso = (['left_shoulder', 'right_shoulder', 'right_hip', 'left_hip'] as const).map((n) => s[n].join(','));
  const [nx, ny] = s.nose;
  const shoulderWidth = Math.hypot(s.left_shoulder[0] - s.right_shoulder[0], s.left_shoulder[1] - s.right_shoulder[1]);
  const r = shoulderWidth * 0.3;
  const neck: [number, number] = [
    (s.left_shoulder[0] + s.right_shoulder[0]) / 2,
    (s.left_shoulder[1] + s.right_shoulder[1]) / 2,
  ];
  const dot = (name: keyof Skeleton, radius: number, colour: string) =>
    `<circle cx="${s[name][0]}" cy="${s[name][1]}" r="${radius}" fill="${colour}"/>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
<defs><linearGradient id="room" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#c9d6df"/>
<stop offset="0.7" stop-color="#e8e2d0"/><stop offset="1" stop-color="#8a7f6a"/></linearGradient></defs>
<rect width="100%" height="100%" fill="url(#room)"/>
${line('left_hip', 'left_knee', TROUSERS, 30)}${line('right_hip', 'right_knee', TROUSERS, 30)}
${line('left_knee', 'left_ankle', TROUSERS, 24)}${line('right_knee', 'right_ankle', TROUSERS, 24)}
${dot('left_ankle', 12, '#222')}${dot('right_ankle', 12, '#222')}
<polygon points="${torso.join(' ')}" fill="${SHIRT}" stroke="${SHIRT}" stroke-width="14" stroke-linejoin="round"/>
${line('left_shoulder', 'left_elbow', SHIRT, 22)}${line('right_shoulder', 'right_elbow', SHIRT, 22)}
${line('left_elbow', 'left_wrist', SKIN, 16)}${line('right_elbow', 'right_wrist', SKIN, 16)}
${dot('left_wrist', 11, SKIN)}${dot('right_wrist', 11, SKIN)}
<line x1="${neck[0]}" y1="${neck[1]}" x2="${nx}" y2="${ny}" stroke="${SKIN}" stroke-width="${r * 0.7}"/>
<ellipse cx="${nx}" cy="${ny - r * 0.1}" rx="${r * 0.85}" ry="${r}" fill="${SKIN}" transform="rotate(${headTilt(s)} ${nx} ${ny})"/>
<path d="M ${nx - r * 0.85} ${ny - r * 0.2} Q ${nx} ${ny - r * 1.6} ${nx + r * 0.85} ${ny - r * 0.2} Z" fill="#3b2a1a" transform="rotate(${headTilt(s)} ${nx} ${ny})"/>
${dot('left_eye', r * 0.1, '#111')}${dot('right_eye', r * 0.1, '#111')}
</svg>`;
}

/** The head's tilt in degrees: it follows the line from the neck to the nose (0 for an upright body). */
function headTilt(s: Skeleton): number {
  const neckX = (s.left_shoulder[0] + s.right_shoulder[0]) / 2;
  const neckY = (s.left_shoulder[1] + s.right_shoulder[1]) / 2;
  return (Math.atan2(s.nose[0] - neckX, neckY - s.nose[1]) * 180) / Math.PI;
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
