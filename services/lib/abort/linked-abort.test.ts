import { describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { watchAbortListeners } from '../../../test/support/abort-listeners.js';
import { linkAbort } from './index.js';

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('linkAbort', () => {
  it('aborts every linked child with the parent’s reason, or with the reason given for that child', () => {
    const parent = new AbortController();
    const plain = new AbortController();
    const own = new AbortController();
    linkAbort(parent.signal, plain);
    linkAbort(parent.signal, own, () => 'stopping');
    const why = new Error('shutdown');
    parent.abort(why);
    expect(plain.signal.reason).toBe(why);
    expect(own.signal.reason).toBe('stopping');
    expect(listeners(parent.signal)).toBe(0);
  });

  it('aborts a child at once when the parent already aborted, and adds no listener', () => {
    const parent = new AbortController();
    parent.abort('gone');
    const child = new AbortController();
    const unlink = linkAbort(parent.signal, child);
    expect(child.signal.reason).toBe('gone');
    expect(listeners(parent.signal)).toBe(0);
    unlink();
  });

  it('keeps one listener on the parent however many children are linked, and none once all are unlinked', () => {
    const parent = new AbortController();
    const watch = watchAbortListeners(parent.signal);
    const unlinks = Array.from({ length: 200 }, () => linkAbort(parent.signal, new AbortController()));
    expect(listeners(parent.signal)).toBe(1);
    for (const unlink of unlinks) unlink();
    watch.stop();
    expect({ peak: watch.peak, now: listeners(parent.signal), warned: watch.warned() }).toEqual({
      peak: 1,
      now: 0,
      warned: false,
    });
  });

  it('leaves an unlinked child alone, and unlinking twice removes nobody else', () => {
    const parent = new AbortController();
    const gone = new AbortController();
    const kept = new AbortController();
    const unlink = linkAbort(parent.signal, gone);
    linkAbort(parent.signal, kept);
    unlink();
    unlink();
    expect(listeners(parent.signal)).toBe(1);
    parent.abort('bye');
    expect(gone.signal.aborted).toBe(false);
    expect(kept.signal.reason).toBe('bye');
  });

  it('links a child again after the parent dropped its listener', () => {
    const parent = new AbortController();
    linkAbort(parent.signal, new AbortController())();
    const child = new AbortController();
    linkAbort(parent.signal, child);
    expect(listeners(parent.signal)).toBe(1);
    parent.abort('again');
    expect(child.signal.reason).toBe('again');
  });
});
