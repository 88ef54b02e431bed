import type * as ort from 'onnxruntime-node';
import type { ModelInfo, TextEmbedder } from './roles.js';
import { ClipBpeTokenizer } from './clip-bpe-tokenizer.js';
import { l2Normalize } from './l2-normalize.js';
import { outputName, type LoadedModel } from './loaded-model.js';
import { clipFeeds, useSparseFeeds, type TextFeedBuilder } from './text-feeds.js';
import { UseSentencePieceTokenizer, type VocabularyEntry } from './use-sentencepiece-tokenizer.js';

/** Thrown for a tokenizer kind this runtime cannot run. */
export class UnsupportedTokenizerError extends Error {
  constructor(kind: string, model: string) {
    super(`model ${model}: tokenizer "${kind}" is not supported (supported: use-sentencepiece, clip-bpe)`);
    this.name = 'UnsupportedTokenizerError';
  }
}

/** The tokenizer files of a text model, already read: the parsed vocabulary JSON and, for CLIP, the merges text. */
export interface TokenizerFiles {
  vocabulary: unknown;
  merges?: string;
}

/** Texts per session run: bounds the input size for long lists. */
const TEXTS_PER_RUN = 64;

function requireInput(model: LoadedModel, name: string): void {
  if (!model.session.inputNames.includes(name)) {
    throw new Error(
      `model ${model.manifest.name}: ${model.manifest.tokenizer?.kind} text model needs a "${name}" input`,
    );
  }
}

function feedBuilder(model: LoadedModel, files: TokenizerFiles): TextFeedBuilder {
  const { manifest, session } = model;
  const kind = manifest.tokenizer?.kind ?? 'none';
  if (kind === 'use-sentencepiece') {
    if (!Array.isArray(files.vocabulary) || !Array.isArray(files.vocabulary[0])) {
      throw new Error(`model ${manifest.name}: vocabulary is not a list of [piece, score] pairs`);
    }
    requireInput(model, 'indices');
    requireInput(model, 'values');
    const tokenizer = new UseSentencePieceTokenizer(files.vocabulary as VocabularyEntry[]);
    return useSparseFeeds(tokenizer, manifest.tokenizer?.maxLength ?? Number.POSITIVE_INFINITY);
  }
  if (kind === 'clip-bpe') {
    if (typeof files.vocabulary !== 'object' || files.vocabulary === null || Array.isArray(files.vocabulary)) {
      throw new Error(`model ${manifest.name}: CLIP vocabulary must map tokens to ids`);
    }
    if (files.merges === undefined) throw new Error(`model ${manifest.name}: CLIP tokenizer needs a merges file`);
    const tokenizer = new ClipBpeTokenizer(
      files.vocabulary as Record<string, number>,
      files.merges,
      manifest.tokenizer?.maxLength ?? 77,
    );
    requireInput(model, 'input_ids');
    const ids = session.inputMetadata.find((m) => m.name === 'input_ids') as { type?: string } | undefined;
    const maskName = session.inputNames.includes('attention_mask') ? 'attention_mask' : undefined;
    return clipFeeds(tokenizer, { idsName: 'input_ids', maskName, int64: ids?.type !== 'int32' });
  }
  throw new UnsupportedTokenizerError(kind, manifest.name);
}

/**
 * Text embedder over an ONNX text model: Universal Sentence Encoder lite (sparse sentencepiece ids) or a CLIP text
 * tower (BPE ids). Output [batch, dimension], L2-normalised here.
 */
export class OnnxTextEmbedder implements TextEmbedder {
  readonly info: ModelInfo;
  readonly dimension: number;
  private readonly output: string;

  private constructor(
    private readonly model: LoadedModel,
    private readonly feeds: TextFeedBuilder,
  ) {
    if (!model.manifest.dimension)
      throw new Error(`model ${model.manifest.name}: embedding manifest needs "dimension"`);
    this.info = model.info;
    this.dimension = model.manifest.dimension;
    this.output = outputName(model, 'embedding');
  }

  /** Builds the embedder for a loaded `text-embedder` model from its tokenizer files. */
  static create(model: LoadedModel, files: TokenizerFiles): OnnxTextEmbedder {
    return new OnnxTextEmbedder(model, feedBuilder(model, files));
  }

  /** Embeds texts; vectors are L2-normalised, in input order. Empty text still yields a vector. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += TEXTS_PER_RUN) {
      vectors.push(...(await this.embedBatch(texts.slice(start, start + TEXTS_PER_RUN))));
    }
    return vectors;
  }

  private async embedBatch(texts: string[]): Promise<Float32Array[]> {
    const outputs = await this.model.session.run(this.feeds(texts), [this.output]);
    const result: ort.Tensor = outputs[this.output];
    const data = result.data as Float32Array;
    const perText = data.length / texts.length;
    if (perText !== this.dimension) {
      throw new Error(
        `model ${this.info.name}: output has ${perText} values per text, manifest says ${this.dimension}`,
      );
    }
    return texts.map((_, i) => l2Normalize(data, i * perText, perText));
  }
}
