import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Real photos for tests (copied from the shared fixtures; provenance in its SOURCES.md). */
export const FIXTURE_IMAGES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/images');

/** Absolute path of one fixture photo, e.g. `fixtureImage('astronaut.png')`. */
export const fixtureImage = (name: string): string => path.join(FIXTURE_IMAGES_DIR, name);
