import * as ort from 'onnxruntime-node';
import type { ModelInfo, TextEmbedder } from './roles.js';
import { l2Normalize } from './l2-normalize.js';
import { outputName, type LoadedModel } from './loaded-model.js';
import { UseSentencePieceTokenizer, type VocabularyEntry } from './use-sentencepiece-tokenizer.js';

/** Thrown for a tokenizer kind this runtime cannot run yet (e.g. CLIP's BPE). */
export class UnsupportedTokenizerError extends Error {
  constructor(kind: string, model: string) {
    super(`model ${model}: tokenizer "${kind}" is not supported yet (supported: use-sentencepiece)`);
    this.name = 'UnsupportedTokenizerError';
  }
}

/** Sentences per session run: bounds the sparse input size for long lists. */
const SENTENCES_PER_RUN = 64;

/**
 * Text embedder for Universal-Sentence-Encoder-style graphs: sparse sentencepiece ids fed as `indices` [n,2]
 * (sentence, position) and `values` [n], output [batch, dimension].
 */
export class OnnxTextEmbedder implements TextEmbedder {
  readonly info: ModelInfo;
  readonly dimension: number;
  private readonly output: string;
  private readonly maxLength: number;

  constructor(
    private readonly model: LoadedModel,
    private readonly tokenizer: UseSentencePieceTokenizer,
  ) {
    const { manifest, session } = model;
    if (!manifest.dimension) throw new Error(`model ${manifest.name}: embedding manifest needs "dimension"`);
    for (const input of ['indices', 'values']) {
      if (!session.inputNames.includes(input)) {
        throw new Error(`model ${manifest.name}: sentencepiece text model needs an "${input}" input`);
      }
    }
    this.info = model.info;
    this.dimension = manifest.dimension;
    this.output = outputName(model, 'embedding');
    this.maxLength = manifest.tokenizer?.maxLength ?? Number.POSITIVE_INFINITY;
  }

  /** Builds the embedder for a loaded model with role `text-embedder`, given its parsed vocabulary file. */
  static create(model: LoadedModel, vocabulary: unknown): OnnxTextEmbedder {
    const kind = model.manifest.tokenizer?.kind ?? 'none';
    if (kind !== 'use-sentencepiece') throw new UnsupportedTokenizerError(kind, model.manifest.name);
    if (!Array.isArray(vocabulary) || !Array.isArray(vocabulary[0])) {
      throw new Error(`model ${model.manifest.name}: vocabulary is not a list of [piece, score] pairs`);
    }
    return new OnnxTextEmbedder(model, new UseSentencePieceTokenizer(vocabulary as VocabularyEntry[]));
  }

  /** Embeds texts; vectors are L2-normalised, in input order. Empty text still yields a vector. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += SENTENCES_PER_RUN) {
      vectors.push(...(await this.embedBatch(texts.slice(start, start + SENTENCES_PER_RUN))));
    }
    return vectors;
  }

  private async embedBatch(texts: string[]): Promise<Float32Array[]> {
    const encodings = texts.map((text) => {
      const ids = this.tokenizer.encode(text).slice(0, this.maxLength);
      // A sentence without tokens would drop its row from the sparse batch and shift every later row.
      return ids.length > 0 ? ids : [this.tokenizer.emptyTextId];
    });
    const total = encodings.reduce((sum, ids) => sum + ids.length, 0);
    const indices = new Int32Array(total * 2);
    const values = new Int32Array(total);
    let k = 0;
    encodings.forEach((ids, sentence) => {
      ids.forEach((id, position) => {
        indices[2 * k] = sentence;
        indices[2 * k + 1] = position;
        values[k++] = id;
      });
    });
    const feeds = {
      indices: new ort.Tensor('int32', indices, [total, 2]),
      values: new ort.Tensor('int32', values, [total]),
    };
    const result = (await this.model.session.run(feeds, [this.output]))[this.output];
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
