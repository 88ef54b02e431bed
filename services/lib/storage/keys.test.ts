import { describe, expect, it } from '@jest/globals';
import { assertValidKey, assertValidPrefix, isValidBucketName } from './keys.js';
import { InvalidKeyError } from './object-store.js';

describe('bucket names', () => {
  it.each(['abc', 'media', 'my.bucket-1', '0-9', 'a'.repeat(63), 'default-bucket'])('accepts %j', (name) => {
    expect(isValidBucketName(name)).toBe(true);
  });
  it.each([
    'ab',
    'a'.repeat(64),
    'Media',
    'my_bucket',
    '.abc',
    'abc.',
    '-abc',
    'abc-',
    'a..b',
    'a.-b',
    'a-.b',
    '192.168.0.1',
    'a b',
    'a/b',
    '',
  ])('rejects %j', (name) => {
    expect(isValidBucketName(name)).toBe(false);
  });
});

describe('object keys', () => {
  it.each(['video.mp4', 'vid-1/frames/000001.jpg', 'a/b..c/d', '..hidden', 'spaces ok/é', 'x'.repeat(1024)])(
    'accepts %j',
    (key) => {
      expect(() => assertValidKey(key)).not.toThrow();
    },
  );
  it.each([
    '',
    '/abs',
    '../up',
    'a/../b',
    'a/..',
    '.',
    'a/./b',
    'a//b',
    'trailing/',
    'back\\slash',
    'nul\u0000',
    'tab\tkey',
    'del\u007f',
    'c1\u0085',
    'é'.repeat(513),
  ])('rejects %j', (key) => {
    expect(() => assertValidKey(key)).toThrow(InvalidKeyError);
  });

  it('accepts directory prefixes but not traversal prefixes', () => {
    expect(() => assertValidPrefix('')).not.toThrow();
    expect(() => assertValidPrefix('vid-1/')).not.toThrow();
    expect(() => assertValidPrefix('vid-1/fra')).not.toThrow();
    expect(() => assertValidPrefix('../')).toThrow(InvalidKeyError);
    expect(() => assertValidPrefix('/')).toThrow(InvalidKeyError);
    expect(() => assertValidPrefix('a//')).toThrow(InvalidKeyError);
  });
});
