import type { MediaCatalogue } from './catalogue.js';
import { sameOwner, type ContentMarker, type ContentMarkers } from './content-markers.js';
import type { ReferencedMedia } from './referenced-media.js';

/** What decides whether content is already ingested: its marker, and whether the owning video still exists. */
export interface ContentOwnerSources {
  markers: ContentMarkers;
  catalogue: MediaCatalogue;
  references: ReferencedMedia;
}

/** Whether a marker still holds its hash: a claim not past its time-out, whose video exists (stored or referenced). */
async function holds(sources: ContentOwnerSources, marker: ContentMarker): Promise<boolean> {
  if (sources.markers.isStaleClaim(marker)) return false;
  if (await sources.catalogue.find(marker.bucket_name, marker.video_id)) return true;
  return Boolean(await sources.references.findLive(marker.bucket_name, marker.video_id));
}

/**
 * The marker of `sha256` when the video owning it still exists, stored or referenced in place (and readable); a
 * marker whose video vanished, or a claim left by a crashed run, no longer counts.
 */
export async function liveContentOwner(
  sources: ContentOwnerSources,
  sha256: string,
): Promise<ContentMarker | undefined> {
  const owner = await sources.markers.find(sha256);
  return owner && (await holds(sources, owner)) ? owner : undefined;
}

/** The outcome of a claim: `won` when this call took the hash; `owner` when another video holds it. */
export interface ContentClaim {
  won: boolean;
  owner?: ContentMarker;
}

// Each step follows one takeover made by someone else; more than a few in one claim means markers churn endlessly.
const MAX_CLAIM_STEPS = 8;

/**
 * Claims `mine.sha256` for `mine`'s video, atomically: of racing claimants exactly one wins (create-if-absent of the
 * hash marker), every other gets the holder back. A marker that no longer holds (its video vanished, or a claim past
 * the claim time-out) is taken over, again by one claimant only. Already holding it (a re-run) is neither won nor lost.
 */
export async function claimContent(sources: ContentOwnerSources, mine: ContentMarker): Promise<ContentClaim> {
  const { markers } = sources;
  // The link first: whatever happens after, removing this video finds and releases what it claimed.
  await markers.link(mine);
  let current: ContentMarker | undefined;
  for (let step = 0; step < MAX_CLAIM_STEPS; step++) {
    if (!current) {
      if (await markers.create(mine)) return { won: true };
      current = await markers.find(mine.sha256);
      // Released between the two calls: try to create it again.
      if (!current) continue;
    }
    if (sameOwner(current, mine)) return { won: false };
    if (await holds(sources, current)) return { won: false, owner: current };
    current = await markers.takeOver(current, mine);
    if (!current) return { won: true };
  }
  throw new Error(`the claim of content ${mine.sha256} did not settle after ${MAX_CLAIM_STEPS} steps`);
}
