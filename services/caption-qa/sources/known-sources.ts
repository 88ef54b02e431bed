import { text as readText } from 'node:stream/consumers';
import type { SharedState } from '../../lib/shared-state/index.js';
import { ObjectNotFoundError, type ObjectStore } from '../../lib/storage/index.js';
import type { KnownSources } from '../question/source-mentions.js';

const KEY = 'sources.json';
/** The most names of each kind replicas share (newest first; a name pushed twice is read once). */
const SHARED_NAMES_MAX = 10_000;

/**
 * The camera and run names captions have come from, so that a question naming one can filter by it. Kept beside the
 * frames (`sources.json` in the service's bucket) so a restart knows them; with shared state (ARGUS_REDIS_URL) a name
 * one replica learns is pushed to a shared list that every replica reads before it parses a question, so the others
 * know it at once (not only at their next retention sweep). Shared state unreachable: each replica uses the names it
 * knows itself (fail open), and learns the others' again when it answers.
 */
export class SourceRegistry {
  private cameras = new Set<string>();
  private runs = new Set<string>();
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ObjectStore,
    private readonly bucket: string,
    private readonly shared?: SharedState,
  ) {}

  /** The names known now, every replica's when state is shared. */
  async known(): Promise<KnownSources> {
    if (this.shared) {
      try {
        const [cameras, runs] = await Promise.all([
          this.shared.recent('sources:cameras', SHARED_NAMES_MAX),
          this.shared.recent('sources:runs', SHARED_NAMES_MAX),
        ]);
        for (const name of cameras) this.cameras.add(name);
        for (const name of runs) this.runs.add(name);
      } catch {
        // fail open: the names this replica knows
      }
    }
    return this.snapshot();
  }

  private snapshot(): KnownSources {
    return { cameras: [...this.cameras], runs: [...this.runs] };
  }

  /** Merges the stored names in (at start, and on each retention sweep, to learn other replicas' names). */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await readText(await this.store.get(this.bucket, KEY));
    } catch (error) {
      if (error instanceof ObjectNotFoundError) return;
      throw error;
    }
    const stored = JSON.parse(text) as Partial<KnownSources>;
    for (const name of stored.cameras ?? []) if (typeof name === 'string') this.cameras.add(name);
    for (const name of stored.runs ?? []) if (typeof name === 'string') this.runs.add(name);
  }

  /** Records the names of one caption; writes the registry only when a name is new. */
  async note(camera: string | undefined, run: string | undefined): Promise<void> {
    const fresh = (camera !== undefined && !this.cameras.has(camera)) || (run !== undefined && !this.runs.has(run));
    if (!fresh) return;
    if (camera !== undefined && !this.cameras.has(camera)) {
      this.cameras.add(camera);
      await this.shared?.pushRecent('sources:cameras', camera, SHARED_NAMES_MAX).catch(() => undefined);
    }
    if (run !== undefined && !this.runs.has(run)) {
      this.runs.add(run);
      await this.shared?.pushRecent('sources:runs', run, SHARED_NAMES_MAX).catch(() => undefined);
    }
    // One write at a time, each of the whole current set, so the last one written holds every name.
    this.saving = this.saving
      .catch(() => undefined)
      .then(() => this.store.put(this.bucket, KEY, Buffer.from(JSON.stringify(this.snapshot()))))
      .then(() => undefined);
    await this.saving;
  }
}
