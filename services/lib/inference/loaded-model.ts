import type { ImageInputSpec, ModelManifest } from './manifest.js';
import type { ModelInfo } from './roles.js';
import type { ModelSession } from './worker-session.js';

/** A manifest with its created session: what every role class is built from. */
export interface LoadedModel {
  manifest: ModelManifest;
  session: ModelSession;
  info: ModelInfo;
}

/** The manifest's image input spec; throws when an image role's manifest has none. */
export function requireImageSpec(manifest: ModelManifest): ImageInputSpec {
  if (!manifest.image) throw new Error(`model ${manifest.name}: manifest has no "image" input spec`);
  return manifest.image;
}

/** The output tensor name the manifest gives for `meaning`, or the session's only output. */
export function outputName(model: LoadedModel, meaning: string): string {
  const named = model.manifest.outputs[meaning];
  if (named) {
    if (!model.session.outputNames.includes(named)) {
      throw new Error(
        `model ${model.manifest.name}: output "${named}" not in graph (${model.session.outputNames.join(', ')})`,
      );
    }
    return named;
  }
  if (model.session.outputNames.length === 1) return model.session.outputNames[0];
  throw new Error(`model ${model.manifest.name}: manifest names no "${meaning}" output`);
}
