import { describe, expect, it } from '@jest/globals';
import { formatSseMessage } from './sse.js';

describe('formatSseMessage', () => {
  it('writes id, event, retry and one data line per payload line, ending with a blank line', () => {
    expect(formatSseMessage({ id: 7, event: 'alert_action', retry: 3000, data: '{"a":1}' })).toBe(
      'id: 7\nevent: alert_action\nretry: 3000\ndata: {"a":1}\n\n',
    );
    expect(formatSseMessage({ data: 'one\r\ntwo\nthree' })).toBe('data: one\ndata: two\ndata: three\n\n');
  });

  it('keeps line breaks in the event name or id from splitting the frame', () => {
    expect(formatSseMessage({ event: 'x\n\ndata: injected', id: '1\n2', data: '' })).toBe(
      'id: 12\nevent: xdata: injected\ndata: \n\n',
    );
  });
});
