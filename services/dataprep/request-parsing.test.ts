import { describe, expect, it } from '@jest/globals';
import { mapDataprepError } from './errors.js';
import { decodeBase64Image } from './ingest/image-source.js';
import { requestedRange } from './routes/download-route.js';
import { safeFilename, VIDEO_ID_PATTERN } from './media/video-ids.js';

describe('requestedRange', () => {
  it('accepts exactly one byte range and clamps its end', () => {
    expect(requestedRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(requestedRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(requestedRange('bytes=-5', 100)).toEqual({ start: 95, end: 99 });
    expect(requestedRange('bytes=50-500', 100)).toEqual({ start: 50, end: 99 });
  });

  it('sends the whole file for absent, malformed, multi-range or non-byte headers', () => {
    for (const header of [undefined, 'bytes=abc', 'bytes=5-2', 'bytes=0-1,10-20', 'items=0-5', 'garbage']) {
      expect(requestedRange(header, 100)).toBeUndefined();
    }
  });

  it('reports ranges outside the file as unsatisfiable', () => {
    expect(requestedRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(requestedRange('bytes=200-300', 100)).toBe('unsatisfiable');
  });
});

describe('decodeBase64Image', () => {
  const status = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return mapDataprepError(error)?.status;
    }
    return 200;
  };

  it('decodes bare, URL-safe and data-URL base64', () => {
    const bytes = Buffer.from([0xff, 0xd8, 0xff, 0xfe, 0x10]);
    expect(decodeBase64Image(bytes.toString('base64'), 100)).toEqual(bytes);
    expect(decodeBase64Image(bytes.toString('base64url'), 100)).toEqual(bytes);
    expect(decodeBase64Image(`data:image/jpeg;base64,${bytes.toString('base64')}`, 100)).toEqual(bytes);
  });

  it('answers 400 for non-base64 and non-image data URLs, 413 past the cap before decoding', () => {
    expect(status(() => decodeBase64Image('not base64!', 100))).toBe(400);
    expect(status(() => decodeBase64Image('data:text/plain;base64,aGk=', 100))).toBe(400);
    expect(status(() => decodeBase64Image('', 100))).toBe(400);
    expect(status(() => decodeBase64Image(Buffer.alloc(101).toString('base64'), 100))).toBe(413);
    expect(status(() => decodeBase64Image(Buffer.alloc(100).toString('base64'), 100))).toBe(200);
  });
});

describe('video ids and file names', () => {
  it('accepts single safe segments only', () => {
    expect(VIDEO_ID_PATTERN.test('cam-01_2024')).toBe(true);
    for (const id of ['..', '.hidden', 'a/b', 'a\\b', '', 'x'.repeat(129), 'spa ce'])
      expect(VIDEO_ID_PATTERN.test(id)).toBe(false);
  });

  it('reduces client file names to a safe last segment', () => {
    expect(safeFilename('../../etc/passwd', 'f')).toBe('passwd');
    expect(safeFilename('C:\\Users\\me\\My Clip (1).mp4', 'f')).toBe('My_Clip__1_.mp4');
    expect(safeFilename('.bashrc', 'f')).toBe('bashrc');
    expect(safeFilename('', 'media.mp4')).toBe('media.mp4');
    expect(safeFilename(`${'a'.repeat(300)}.jpeg`, 'f')).toMatch(/^a{195}\.jpeg$/);
  });
});
