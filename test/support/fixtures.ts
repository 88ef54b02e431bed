import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Real photos for tests (copied from the shared fixtures; provenance in its SOURCES.md). */
export const FIXTURE_IMAGES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/images');

/** Absolute path of one fixture photo, e.g. `fixtureImage('astronaut.png')`. */
export const fixtureImage = (name: string): string => path.join(FIXTURE_IMAGES_DIR, name);

/** Every fixture photo, in a stable order. */
export const FIXTURE_PHOTOS = [
  'pexels_double_decker_bus.jpg',
  'astronaut.png',
  'chelsea.png',
  'coffee.png',
  'motorcycle_left.png',
  'person_multi_det.jpg',
  'rocket.jpg',
];
