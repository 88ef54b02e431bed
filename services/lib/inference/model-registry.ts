import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { readManifest, type ModelManifest, type ModelRole } from './manifest.js';
import type {
  Detection,
  Detector,
  ExecutionProvider,
  ImageEmbedder,
  Keypoint,
  ModelCallOptions,
  ModelInfo,
  PoseEstimator,
  RgbImage,
  TextEmbedder,
} from './roles.js';
import { OnnxDetector } from './detector.js';
import { OnnxImageEmbedder } from './image-embedder.js';
import type { LoadedModel } from './loaded-model.js';
import { OnnxPoseEstimator } from './pose-estimator.js';
import { createSession } from './session.js';
import { OnnxTextEmbedder } from './text-embedder.js';

/** Default model directory names under `modelsDir`, as written by the importer. */
export const DEFAULT_MODEL_NAMES = {
  imageEmbedder: 'mobilenet-v2-1.4-feature-vector',
  textEmbedder: 'universal-sentence-encoder-lite',
  detector: 'centernet-mobilenetv3-coco',
  poseEstimator: 'movenet-lightning',
} as const;

/** Which model fills each role: a directory name under `modelsDir` or an absolute directory with a manifest. */
export interface ModelsConfig {
  modelsDir: string;
  provider: ExecutionProvider;
  /** Intra-op threads per session (0: one per core). */
  threads: number;
  /** With `cuda`: run on CPU instead of failing when CUDA cannot load (health then reports `cpu`). */
  fallbackToCpu?: boolean;
  /** Idle onnxruntime threads busy-wait for work (faster on a dedicated machine; off by default). */
  spinning?: boolean;
  /** `worker`: each session runs in its own worker thread, so inference never blocks the event loop. */
  isolation?: 'main' | 'worker';
  /**
   * The roles this process uses (default: all four): only their manifests are read, only their sessions can be
   * created, and health reports only them, so a service never needs a model it does not use.
   */
  roles?: readonly ModelSlot[];
  imageEmbedder?: string;
  textEmbedder?: string;
  detector?: string;
  poseEstimator?: string;
}

/** A role slot of the registry, named as in ModelsConfig. */
export type ModelSlot = keyof typeof DEFAULT_MODEL_NAMES;
type Slot = ModelSlot;

/** Every role slot, in the order health lists them. */
export const MODEL_SLOTS: readonly ModelSlot[] = Object.freeze(Object.keys(DEFAULT_MODEL_NAMES) as ModelSlot[]);

const SLOT_ROLES: Record<Slot, ModelRole> = {
  imageEmbedder: 'image-embedder',
  textEmbedder: 'text-embedder',
  detector: 'detector',
  poseEstimator: 'pose-estimator',
};

/** Thrown when a configured model's manifest declares a different role than the slot it was configured for. */
export class ModelRoleMismatchError extends Error {
  constructor(slot: Slot, manifest: ModelManifest, dir: string) {
    super(`model "${manifest.name}" in ${dir} has role ${manifest.role} but is configured as ${SLOT_ROLES[slot]}`);
    this.name = 'ModelRoleMismatchError';
  }
}

/** What health reports per role: model name, device, and whether its session exists yet. */
export interface ModelStatus extends ModelInfo {
  role: ModelRole;
  loaded: boolean;
  dir: string;
  source?: string;
  license?: string;
}

/** The implementation of each role slot. */
export interface RoleImplementations {
  imageEmbedder: ImageEmbedder;
  textEmbedder: TextEmbedder;
  detector: Detector;
  poseEstimator: PoseEstimator;
}

/** The loaded roles `S`; sessions are created on first use (or by `warmUp`). */
export type LoadedModels<S extends ModelSlot = ModelSlot> = Pick<RoleImplementations, S> & {
  /** Per-role status for health. */
  status(): ModelStatus[];
  /** Creates the sessions of the given roles (all loaded ones by default) now, so the first request is not slow. */
  warmUp(slots?: S[]): Promise<void>;
  /** Releases every created session. */
  release(): Promise<void>;
};

/** Resolves a configured model reference to its directory; plain names only, so config cannot walk out of modelsDir. */
export function resolveModelDir(modelsDir: string, reference: string): string {
  if (path.isAbsolute(reference)) return reference;
  if (!/^[\w.-]+$/.test(reference) || reference === '.' || reference === '..') {
    throw new Error(`model "${reference}" must be a directory name under the models dir or an absolute path`);
  }
  return path.join(modelsDir, reference);
}

async function readInside(dir: string, file: string): Promise<string> {
  const full = path.resolve(dir, file);
  if (!full.startsWith(path.resolve(dir) + path.sep)) throw new Error(`${file} escapes ${dir}`);
  return readFile(full, 'utf8');
}

/** One role slot: the validated manifest now, the session and role object on first use. */
class RoleSlot<T> {
  private pending?: Promise<T>;
  private model?: LoadedModel;

  constructor(
    readonly slot: Slot,
    readonly dir: string,
    readonly manifest: ModelManifest,
    readonly modelPath: string,
    private readonly config: ModelsConfig,
    private readonly build: (model: LoadedModel, dir: string) => Promise<T> | T,
  ) {}

  get info(): ModelInfo {
    return this.model?.info ?? { name: this.manifest.name, device: this.config.provider };
  }

  get loaded(): boolean {
    return this.model !== undefined;
  }

  get(): Promise<T> {
    // A failed load is forgotten so a later call retries instead of failing forever.
    this.pending ??= this.load().catch((error) => {
      this.pending = undefined;
      throw error;
    });
    return this.pending;
  }

  async release(): Promise<void> {
    const model = this.model;
    this.model = undefined;
    this.pending = undefined;
    await model?.session.release();
  }

  private async load(): Promise<T> {
    const { session, provider } = await createSession(this.modelPath, this.config);
    const model: LoadedModel = {
      manifest: this.manifest,
      session,
      info: { name: this.manifest.name, device: provider },
    };
    try {
      const instance = await this.build(model, this.dir);
      this.model = model;
      return instance;
    } catch (error) {
      await session.release();
      throw error;
    }
  }
}

/**
 * Reads and validates the manifests of the configured models of `config.roles` (role must match the slot) and
 * returns those role implementations. Sessions are created lazily on first use; call `warmUp()` to create them at
 * startup.
 */
export async function loadModels<S extends ModelSlot = ModelSlot>(
  config: ModelsConfig & { roles?: readonly S[] },
): Promise<LoadedModels<S>> {
  const wanted = new Set<ModelSlot>(config.roles ?? MODEL_SLOTS);
  const open = async <T>(slot: Slot, build: (model: LoadedModel, dir: string) => Promise<T> | T) => {
    const dir = resolveModelDir(config.modelsDir, config[slot] ?? DEFAULT_MODEL_NAMES[slot]);
    const { manifest, modelPath } = await readManifest(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw new Error(`no model manifest at ${path.join(dir, 'manifest.json')}`);
      throw error;
    });
    if (manifest.role !== SLOT_ROLES[slot]) throw new ModelRoleMismatchError(slot, manifest, dir);
    return new RoleSlot<T>(slot, dir, manifest, modelPath, config, build);
  };

  // Each role's slot and the facade handed out for it; the session behind it is created on first use.
  const roles: { [K in ModelSlot]: () => Promise<[RoleSlot<unknown>, RoleImplementations[K]]> } = {
    imageEmbedder: async () => {
      const image = await open('imageEmbedder', (model) => new OnnxImageEmbedder(model));
      return [
        image,
        {
          get info() {
            return image.info;
          },
          dimension: image.manifest.dimension ?? 0,
          input: image.manifest.image && {
            width: image.manifest.image.width,
            height: image.manifest.image.height,
            resize: image.manifest.image.resize,
          },
          embed: async (images: RgbImage[], options?: ModelCallOptions) => (await image.get()).embed(images, options),
        },
      ];
    },
    textEmbedder: async () => {
      const text = await open('textEmbedder', async (model, dir) => {
        const tokenizer = model.manifest.tokenizer!;
        const vocabulary = JSON.parse(await readInside(dir, tokenizer.vocab));
        const merges =
          tokenizer.kind === 'clip-bpe' ? await readInside(dir, tokenizer.merges ?? 'merges.txt') : undefined;
        return OnnxTextEmbedder.create(model, { vocabulary, merges });
      });
      return [
        text,
        {
          get info() {
            return text.info;
          },
          dimension: text.manifest.dimension ?? 0,
          embed: async (texts: string[]) => (await text.get()).embed(texts),
        },
      ];
    },
    detector: async () => {
      const detect = await open('detector', (model) => new OnnxDetector(model));
      return [
        detect,
        {
          get info() {
            return detect.info;
          },
          detect: async (img: RgbImage, minScore: number, options?: ModelCallOptions): Promise<Detection[]> =>
            (await detect.get()).detect(img, minScore, options),
        },
      ];
    },
    poseEstimator: async () => {
      const pose = await open('poseEstimator', (model) => new OnnxPoseEstimator(model));
      return [
        pose,
        {
          get info() {
            return pose.info;
          },
          estimate: async (img: RgbImage): Promise<Keypoint[]> => (await pose.get()).estimate(img),
        },
      ];
    },
  };
  const chosen = MODEL_SLOTS.filter((slot) => wanted.has(slot));
  const opened = await Promise.all(chosen.map((slot) => roles[slot]()));
  const slots = new Map(chosen.map((slot, i) => [slot, opened[i][0]]));
  const facades = Object.fromEntries(chosen.map((slot, i) => [slot, opened[i][1]])) as Pick<RoleImplementations, S>;

  return {
    ...facades,
    status: () =>
      [...slots.values()].map((s) => ({
        role: s.manifest.role,
        ...s.info,
        loaded: s.loaded,
        dir: s.dir,
        source: s.manifest.source,
        license: s.manifest.license,
      })),
    warmUp: async (which: readonly S[] = chosen as S[]) => {
      await Promise.all(
        which.map((slot) => {
          const role = slots.get(slot);
          if (!role) throw new Error(`the ${slot} role was not loaded (ModelsConfig.roles)`);
          return role.get();
        }),
      );
    },
    release: async () => {
      await Promise.all([...slots.values()].map((s) => s.release()));
    },
  };
}
