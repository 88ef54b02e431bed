/** One child linked to a parent signal, with the reason it is aborted with (the parent's when none). */
interface Link {
  readonly child: AbortController;
  readonly reason: (() => unknown) | undefined;
}

/** The links of one parent signal, and the one listener through which the parent aborts them. */
interface Links {
  readonly children: Set<Link>;
  readonly onAbort: () => void;
}

const linksOf = new WeakMap<AbortSignal, Links>();

/** Unlinks a child from its parent; calling it again does nothing. */
export type Unlink = () => void;

/**
 * Aborts `child` when `parent` aborts (at once when it already has), with `reason()` or else the parent's reason.
 * Returns the function that unlinks the two, to call when the child's operation ends, whether it succeeded or failed.
 *
 * However many children are linked, the parent carries a single abort listener, and none once the last child is
 * unlinked: a process-long signal (a server's stop, a dispatcher's shutdown, a workload's abort) shared by hundreds
 * of operations in flight neither collects listeners nor trips Node's MaxListenersExceededWarning. (Node 20's
 * AbortSignal.any is no substitute: the source keeps a reference to every signal derived from it, for good.)
 */
export function linkAbort(parent: AbortSignal, child: AbortController, reason?: () => unknown): Unlink {
  if (parent.aborted) {
    child.abort(reason ? reason() : parent.reason);
    return () => undefined;
  }
  let links = linksOf.get(parent);
  if (!links) {
    const children = new Set<Link>();
    const onAbort = () => {
      linksOf.delete(parent);
      // abort() never throws: a failing listener of a child is reported by that child's own dispatch.
      for (const link of children) link.child.abort(link.reason ? link.reason() : parent.reason);
      children.clear();
    };
    links = { children, onAbort };
    linksOf.set(parent, links);
    parent.addEventListener('abort', onAbort, { once: true });
  }
  const linked = links;
  const link: Link = { child, reason };
  linked.children.add(link);
  return () => {
    if (!linked.children.delete(link) || linked.children.size > 0) return;
    linksOf.delete(parent);
    parent.removeEventListener('abort', linked.onAbort);
  };
}
