import { describe, expect, it } from '@jest/globals';
import { counted } from './index.js';

describe('counted', () => {
  it('puts the noun in the number of the count', () => {
    expect([0, 1, 2].map((n) => counted(n, 'embedding'))).toEqual(['0 embeddings', '1 embedding', '2 embeddings']);
    expect(counted(1, 'stored item')).toBe('1 stored item');
    expect(counted(3, 'person', 'people')).toBe('3 people');
  });
});
