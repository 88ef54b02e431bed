/**
 * Chunked lists for the fake API server, as kube-apiserver serves `limit` and `continue`: items in key order
 * (namespace/name), at most `limit` per page, `metadata.continue` naming where the next page starts and the list's
 * resourceVersion, and 410 Expired for a continue token whose resourceVersion was compacted. What it does not model:
 * a real server reads later pages from the first page's snapshot; this one reads them from the current objects.
 */

/** A list body as the fake builds it. */
export interface ListBody {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: any[];
}

interface ContinueToken {
  /** The resourceVersion of the list's first page. */
  rv: string;
  /** The key of the last item served. */
  start: string;
}

const keyOf = (item: any) => `${item.metadata.namespace ?? ''}/${item.metadata.name}`;

function expired(message: string) {
  return {
    code: 410,
    body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410, message },
  };
}

/** One page of `list` for the request's `limit` and `continue`; the whole list without a limit. */
export function listPage(
  list: ListBody,
  query: Record<string, string>,
  compactedBelow: number,
): { code: number; body: unknown } {
  const limit = Number(query.limit);
  if (!query.continue && !(limit > 0)) return { code: 200, body: list };
  let token: ContinueToken = { rv: list.metadata.resourceVersion, start: '' };
  if (query.continue) {
    try {
      token = JSON.parse(Buffer.from(query.continue, 'base64url').toString('utf8'));
    } catch {
      return { code: 400, body: { kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 } };
    }
    // As for watches: the history after the token's version is gone (compaction reached past it).
    if (Number(token.rv) + 1 < compactedBelow) {
      return expired(
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
      );
    }
  }
  const rest = [...list.items].sort((a, b) => keyOf(a).localeCompare(keyOf(b))).filter((i) => keyOf(i) > token.start);
  const items = limit > 0 ? rest.slice(0, limit) : rest;
  const more = rest.length - items.length;
  const next = more > 0 ? { rv: token.rv, start: keyOf(items.at(-1)) } : undefined;
  return {
    code: 200,
    body: {
      ...list,
      metadata: {
        resourceVersion: token.rv,
        ...(next
          ? { continue: Buffer.from(JSON.stringify(next)).toString('base64url'), remainingItemCount: more }
          : {}),
      },
      items,
    },
  };
}
