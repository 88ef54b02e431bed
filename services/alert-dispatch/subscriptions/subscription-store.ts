import { EventEmitter } from 'node:events';
import { watch, type FSWatcher } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { KeyedQueue } from '../../lib/keyed-queue/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { SubscriptionDefaults } from '../dispatch/resolve-tools.js';
import type { DedupSpec, EscalationSpec, ToolArguments } from '../dispatch/types.js';
import { subscriptionFileSchema } from './subscription-schema.js';

/** A validated subscription entry. */
export interface SubscriptionEntry extends SubscriptionDefaults {
  alert_name: string;
  tools: string[];
  tool_arguments: ToolArguments;
  dedup?: DedupSpec;
  escalation?: EscalationSpec;
}

/** Outcome of a (re)load: `ok` false keeps the previous entries and says why in `error`. */
export interface ReloadOutcome {
  ok: boolean;
  file: string | null;
  count: number;
  error: string | null;
  loaded_at: string | null;
}

/** Parses and validates subscriptions YAML text; throws an Error naming every problem. */
export function parseSubscriptions(text: string): SubscriptionEntry[] {
  const doc = YAML.parse(text) ?? {};
  const { value, error } = subscriptionFileSchema.validate(doc, {
    abortEarly: false,
    convert: true,
    errors: { wrap: { label: false } },
  });
  if (error) throw new Error(error.details.map((d) => d.message).join('; '));
  return value.subscriptions as SubscriptionEntry[];
}

/** What identifies the content the file name leads to: the resolved path and that file's identity and times. */
async function resolvedSignature(file: string): Promise<string> {
  try {
    const target = await realpath(file);
    const s = await stat(target);
    return `${target}\0${s.ino}\0${s.size}\0${s.mtimeMs}\0${s.ctimeMs}`;
  } catch {
    return 'missing';
  }
}

/**
 * The subscription entries of ALERT_SUBSCRIPTIONS_FILE, kept in memory. A missing file means no entries; a bad
 * file keeps the previous entries and records why. `watch()` watches the file's directory and reloads (debounced, so
 * editors that write in several steps cause one reload) when the file the name resolves to has changed: edited in
 * place, replaced, or — a Kubernetes ConfigMap volume — reached through a `..data` symlink the kubelet swapped.
 * Emits `reloaded` with the outcome after every load.
 */
export class SubscriptionStore extends EventEmitter<{ reloaded: [ReloadOutcome] }> {
  private entries = new Map<string, SubscriptionEntry>();
  private outcome: ReloadOutcome;
  private watcher?: FSWatcher;
  private debounce?: NodeJS.Timeout;
  /** Reloads run one at a time (a watch event and POST /tools/reload may coincide). */
  private readonly reloads = new KeyedQueue<string>();
  /** resolvedSignature of the file at the latest load. */
  private loadedSignature = '';

  constructor(
    private readonly file: string | undefined,
    private readonly logger: Logger,
    private readonly debounceMs = 200,
  ) {
    super();
    this.outcome = { ok: true, file: file ?? null, count: 0, error: null, loaded_at: null };
  }

  /** Entry for an alert name. */
  find(alertName: string): SubscriptionEntry | undefined {
    return this.entries.get(alertName);
  }

  /** All entries, in file order. */
  list(): SubscriptionEntry[] {
    return [...this.entries.values()];
  }

  /** Result of the latest load. */
  status(): ReloadOutcome {
    return { ...this.outcome };
  }

  /** Reads the file again; reloads never overlap. */
  reload(): Promise<ReloadOutcome> {
    return this.reloads.run('file', () => this.load());
  }

  /** Starts watching the file's directory (no-op without a file or when the directory is missing). */
  watch(): void {
    if (!this.file || this.watcher) return;
    const dir = path.dirname(this.file);
    try {
      // Every entry of the directory counts: a ConfigMap update renames `..data`, never the file's own name.
      this.watcher = watch(dir, () => {
        clearTimeout(this.debounce);
        // A reload refused because the store closed meanwhile is no failure.
        this.debounce = setTimeout(() => void this.reloadIfChanged().catch(() => undefined), this.debounceMs);
      });
      this.watcher.on('error', (err) => this.logger.warn('subscriptions watch failed', { error: err.message }));
    } catch (err) {
      this.logger.warn('cannot watch subscriptions directory', { dir, error: (err as Error).message });
    }
  }

  /** Stops watching; later reloads are refused (QueueClosedError). */
  close(): void {
    clearTimeout(this.debounce);
    this.watcher?.close();
    this.watcher = undefined;
    void this.reloads.close();
  }

  /** Reloads when the file the name resolves to is not the one loaded last. */
  private async reloadIfChanged(): Promise<void> {
    if (this.file && (await resolvedSignature(this.file)) !== this.loadedSignature) await this.reload();
  }

  private async load(): Promise<ReloadOutcome> {
    const outcome = await this.read();
    this.emit('reloaded', outcome);
    return outcome;
  }

  private async read(): Promise<ReloadOutcome> {
    const now = new Date().toISOString();
    if (!this.file) return (this.outcome = { ...this.outcome, ok: true, count: 0, loaded_at: now });
    let text: string;
    try {
      // Taken before reading: a change made during the read shows as a different signature at the next event.
      this.loadedSignature = await resolvedSignature(this.file);
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        return this.fail(`cannot read file: ${(err as Error).message}`);
      this.logger.warn('subscriptions file not found; no subscriptions', { file: this.file });
      this.entries = new Map();
      return (this.outcome = { ok: true, file: this.file, count: 0, error: null, loaded_at: now });
    }
    let parsed: SubscriptionEntry[];
    try {
      parsed = parseSubscriptions(text);
    } catch (err) {
      return this.fail((err as Error).message);
    }
    this.entries = new Map(parsed.map((e) => [e.alert_name, e]));
    this.logger.info('subscriptions loaded', { file: this.file, count: parsed.length });
    return (this.outcome = { ok: true, file: this.file, count: parsed.length, error: null, loaded_at: now });
  }

  private fail(error: string): ReloadOutcome {
    this.logger.error('subscriptions file rejected; keeping previous entries', {
      file: this.file,
      error,
      kept: this.entries.size,
    });
    this.outcome = { ...this.outcome, ok: false, count: this.entries.size, error };
    return { ...this.outcome };
  }
}
