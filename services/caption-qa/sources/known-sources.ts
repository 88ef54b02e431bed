import { text as readText } from 'node:stream/consumers';
import { ObjectNotFoundError, type ObjectStore } from '../../lib/storage/index.js';
import type { KnownSources } from '../question/source-mentions.js';

const KEY = 'sources.json';

/**
 * The camera and run names captions have come from, so that a question naming one can filter by it. Kept beside the
 * frames (`sources.json` in the service's bucket) so a restart, or another replica on the same store, knows them.
 */
export class SourceRegistry {
  private cameras = new Set<string>();
  private runs = new Set<string>();
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ObjectStore,
    private readonly bucket: string,
  ) {}

  /** The names known now. */
  known(): KnownSources {
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
    if (camera !== undefined) this.cameras.add(camera);
    if (run !== undefined) this.runs.add(run);
    // One write at a time, each of the whole current set, so the last one written holds every name.
    this.saving = this.saving
      .catch(() => undefined)
      .then(() => this.store.put(this.bucket, KEY, Buffer.from(JSON.stringify(this.known()))))
      .then(() => undefined);
    await this.saving;
  }
}
