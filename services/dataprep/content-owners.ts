import type { MediaCatalogue } from './catalogue.js';
import type { ContentMarker, ContentMarkers } from './content-markers.js';
import type { ReferencedMedia } from './referenced-media.js';

/** What decides whether content is already ingested: its marker, and whether the owning video still exists. */
export interface ContentOwnerSources {
  markers: ContentMarkers;
  catalogue: MediaCatalogue;
  references: ReferencedMedia;
}

/**
 * The marker of `sha256` when the video owning it still exists, stored or referenced in place (and readable); a
 * marker whose video vanished no longer counts, as in the single-item duplicate policy.
 */
export async function liveContentOwner(
  sources: ContentOwnerSources,
  sha256: string,
): Promise<ContentMarker | undefined> {
  const owner = await sources.markers.find(sha256);
  if (!owner) return undefined;
  if (await sources.catalogue.find(owner.bucket_name, owner.video_id)) return owner;
  return (await sources.references.findLive(owner.bucket_name, owner.video_id)) ? owner : undefined;
}
