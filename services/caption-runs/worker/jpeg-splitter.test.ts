import { describe, expect, it } from '@jest/globals';
import { JpegSplitter, OversizedFrameError } from './jpeg-splitter.js';

const jpeg = (fill: number, length: number) =>
  Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(length, fill), Buffer.from([0xff, 0x00, 0xff, 0xd9])]);

describe('JpegSplitter', () => {
  it('finds every image however the stream is cut, markers split across chunks included', () => {
    const images = [jpeg(1, 10), jpeg(2, 3), jpeg(3, 50)];
    const stream = Buffer.concat([Buffer.from([0x00, 0xff]), ...images]);
    for (const size of [1, 2, 3, 7, 64]) {
      const splitter = new JpegSplitter(1024);
      const found: Buffer[] = [];
      for (let at = 0; at < stream.length; at += size) found.push(...splitter.push(stream.subarray(at, at + size)));
      expect([size, found]).toEqual([size, images]);
    }
  });

  it('refuses an image past the limit, then finds the next one', () => {
    const splitter = new JpegSplitter(20);
    expect(() => splitter.push(jpeg(1, 40))).toThrow(OversizedFrameError);
    expect(splitter.push(jpeg(2, 5))).toEqual([jpeg(2, 5)]);
  });
});
