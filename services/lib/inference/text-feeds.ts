import * as ort from 'onnxruntime-node';
import type { ClipBpeTokenizer } from './clip-bpe-tokenizer.js';
import type { UseSentencePieceTokenizer } from './use-sentencepiece-tokenizer.js';

/** Turns a batch of texts into the session's input tensors. */
export type TextFeedBuilder = (texts: string[]) => Record<string, ort.Tensor>;

/**
 * Universal Sentence Encoder lite: sparse ids, `indices` [n,2] (sentence, position) and `values` [n]. A text without
 * tokens gets the word-separator token, since a sentence with no entries would drop its row from the batch.
 */
export function useSparseFeeds(tokenizer: UseSentencePieceTokenizer, maxLength: number): TextFeedBuilder {
  return (texts) => {
    const encodings = texts.map((text) => {
      const ids = tokenizer.encode(text).slice(0, maxLength);
      return ids.length > 0 ? ids : [tokenizer.emptyTextId];
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
    return {
      indices: new ort.Tensor('int32', indices, [total, 2]),
      values: new ort.Tensor('int32', values, [total]),
    };
  };
}

/**
 * CLIP text towers: `input_ids` [batch, maxLength] padded with the end token (as Hugging Face pads), plus
 * `attention_mask` when the graph takes one; int64 or int32 as the graph declares.
 */
export function clipFeeds(
  tokenizer: ClipBpeTokenizer,
  inputs: { idsName: string; maskName?: string; int64: boolean },
): TextFeedBuilder {
  return (texts) => {
    const length = tokenizer.maxLength;
    const ids = new Array<number>(texts.length * length).fill(tokenizer.endId);
    const mask = new Array<number>(texts.length * length).fill(0);
    texts.forEach((text, row) => {
      tokenizer.encode(text).forEach((id, col) => {
        ids[row * length + col] = id;
        mask[row * length + col] = 1;
      });
    });
    const tensor = (values: number[]) =>
      inputs.int64
        ? new ort.Tensor(
            'int64',
            BigInt64Array.from(values, (v) => BigInt(v)),
            [texts.length, length],
          )
        : new ort.Tensor('int32', Int32Array.from(values), [texts.length, length]);
    const feeds: Record<string, ort.Tensor> = { [inputs.idsName]: tensor(ids) };
    if (inputs.maskName) feeds[inputs.maskName] = tensor(mask);
    return feeds;
  };
}
