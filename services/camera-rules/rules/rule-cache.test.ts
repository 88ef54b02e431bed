import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EmbeddedResourceStore } from '../../../operator/drivers/embedded/index.js';
import { createLogger } from '../../lib/log/index.js';
import { RuleBook } from './rule-book.js';
import { RuleCache } from './rule-cache.js';

const NS = 'cameras';
const logger = createLogger({ service: 'camera-rules-test', level: 'error', json: true });
logger.silent = true;
let dir: string;
let store: EmbeddedResourceStore;
let book: RuleBook;

const rule = (id: string, label: string) =>
  ({ id, label, action: 'alert', camera: null, source: null, event_type: 'end' }) as const;

/** Resolves once the store's watchers have been given the latest change (the embedded store delivers a turn later). */
const delivered = () => new Promise((resolve) => setImmediate(resolve));

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-cache-'));
  store = await EmbeddedResourceStore.open({ dir });
  book = new RuleBook(store, NS, logger);
});

afterAll(async () => {
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the rule cache (the store watched)', () => {
  it('holds the rules there were, then follows adds, counts and deletes, in the book’s order', async () => {
    await book.add(rule('first', 'person'));
    await book.add(rule('second', 'car'));
    const cache = new RuleCache(store, NS);
    expect(await cache.list()).toEqual(await book.list());

    await book.add(rule('third', 'dog'));
    await book.claim('second', 'e1', 'porch', new Date(), 60_000);
    await book.remove('first');
    await delivered();
    const listed = await cache.list();
    expect(listed).toEqual(await book.list());
    expect(listed.map((r) => [r.id, r.count])).toEqual([
      ['second', 1],
      ['third', 0],
    ]);
    await cache.close();
    await expect(cache.list()).rejects.toThrow(/closed/);
  });
});
