/**
 * `read` shared by its callers: a call within `ttlMs` of the last read started gets that read's promise, so that the
 * status messages of every open stream, all due at the same tick, cost one store read instead of one each.
 */
export function sharedRead<T>(read: () => Promise<T>, ttlMs: number, clock: () => number = Date.now): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = clock();
    if (!last || now - last.at >= ttlMs) {
      const value = read();
      // A failed read is not kept: the next caller tries again.
      value.catch(() => {
        if (last?.value === value) last = undefined;
      });
      last = { at: now, value };
    }
    return last.value;
  };
}
