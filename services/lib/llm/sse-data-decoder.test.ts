import { describe, expect, it } from '@jest/globals';
import { SseDataDecoder } from './sse-data-decoder.js';

/** Feeds `bytes` cut at `cuts` and collects every event's data. */
function decodeCut(bytes: Buffer, cuts: number[]): string[] {
  const decoder = new SseDataDecoder();
  const events: string[] = [];
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    events.push(...decoder.push(bytes.subarray(from, at)));
    from = at;
  }
  return [...events, ...decoder.end()];
}

describe('SseDataDecoder', () => {
  // CRLF and LF line ends, a comment, an id and an event field, data over two lines, multi-byte characters.
  const wire = Buffer.from(
    ': hello\r\ndata: {"t":"é"}\r\n\r\nid: 7\nevent: x\ndata: line one\ndata: 🙂 日本\n\ndata: [DONE]\n\n',
    'utf8',
  );
  const expected = ['{"t":"é"}', 'line one\n🙂 日本', '[DONE]'];

  it('yields the same events whatever two places the bytes are cut at (mid-line, mid-character)', () => {
    for (let a = 0; a <= wire.length; a++) {
      for (let b = a; b <= wire.length; b += 7) {
        expect(decodeCut(wire, [a, b])).toEqual(expected);
      }
    }
  });

  it('yields the same events fed one byte at a time', () => {
    expect(
      decodeCut(
        wire,
        Array.from({ length: wire.length }, (_, i) => i),
      ),
    ).toEqual(expected);
  });

  it('drops a last event that never got its blank line', () => {
    expect(decodeCut(Buffer.from('data: a\n\ndata: b\n'), [])).toEqual(['a']);
  });

  it('throws once one event grows past its bound, instead of buffering without end', () => {
    const decoder = new SseDataDecoder();
    const line = Buffer.from(`data: ${'x'.repeat(64 * 1024)}`);
    expect(() => {
      for (let i = 0; i < 32; i++) decoder.push(line);
    }).toThrow(/longer than/);
  });
});
