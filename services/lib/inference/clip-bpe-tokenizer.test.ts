import { describe, expect, it } from '@jest/globals';
import { ClipBpeTokenizer } from './clip-bpe-tokenizer.js';

// A toy vocabulary and merge list with CLIP's conventions ("</w>" ends a word; merges best-first).
const vocabulary = {
  '<|startoftext|>': 100,
  '<|endoftext|>': 101,
  'a</w>': 1,
  c: 2,
  a: 3,
  't</w>': 4,
  ca: 5,
  'cat</w>': 6,
  s: 7,
  'at</w>': 8,
  '!</w>': 9,
};
const merges = ['#version: 0.2', 'c a', 'ca t</w>', 'a t</w>'].join('\n');

describe('ClipBpeTokenizer', () => {
  it('lower-cases, splits words and merges pairs by rank', () => {
    const tokenizer = new ClipBpeTokenizer(vocabulary, merges);
    // "cat": "c a" (rank 0) beats "a t</w>" (rank 2), then "ca t</w>"; "sat" can only merge "a t</w>".
    expect(tokenizer.encode('  A   Cat sat!')).toEqual([100, 1, 6, 7, 8, 9, 101]);
  });

  it('truncates so that the end token always fits within maxLength', () => {
    const tokenizer = new ClipBpeTokenizer(vocabulary, merges, 4);
    expect(tokenizer.encode('a cat sat')).toEqual([100, 1, 6, 101]);
  });

  it('requires the start and end tokens', () => {
    expect(() => new ClipBpeTokenizer({ a: 1 }, merges)).toThrow(/startoftext/);
  });
});
