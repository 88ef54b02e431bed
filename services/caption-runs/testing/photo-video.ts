import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fixtureImage } from '../../../test/support/fixtures.js';
import { makeTestVideo, runFfmpeg, testMediaDir } from '../../../test/support/media.js';

/** The real photos a street video is made of, and a label the default detector finds in each. */
export const STREET_SCENES = [
  { photo: 'person_multi_det.jpg', label: 'person' },
  { photo: 'pexels_double_decker_bus.jpg', label: 'bus' },
] as const;

/** The street video's frame size and rate (what the detector sees when a run does not scale it). */
export const STREET_VIDEO = { width: 320, height: 240, fps: 5 } as const;

let street: Promise<string> | undefined;

/**
 * A real-video MP4 (H.264): each of STREET_SCENES' photos panned for `secondsPerPhoto` (makeTestVideo), one after
 * the other, so a detector finds people, then a bus. Made once per process.
 */
export function makeStreetVideo(secondsPerPhoto = 8): Promise<string> {
  street ??= (async () => {
    const parts = await Promise.all(
      STREET_SCENES.map(({ photo }) =>
        makeTestVideo({ ...STREET_VIDEO, seconds: secondsPerPhoto, source: fixtureImage(photo) }),
      ),
    );
    const dir = await testMediaDir();
    const list = path.join(dir, 'street-parts.txt');
    await writeFile(list, parts.map((part) => `file '${part}'\n`).join(''));
    const file = path.join(dir, 'street.mp4');
    // The parts share their encoding: joined without re-encoding.
    await runFfmpeg(['-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', '-movflags', '+faststart', file]);
    return file;
  })();
  return street;
}
