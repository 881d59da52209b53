import { describe, test } from 'node:test';
import { setMaxListeners } from 'node:events';
import assert from 'node:assert/strict';
import { isResourceExpired, type KubeObject } from '@mk8s/api';
import { FakeClock } from '@mk8s/component-base/testing';
import { defineStorageConformance, take } from '../testing/storage-conformance.js';
import type { Storage, StorageEvent, StorageWatchOptions } from './interfaces.js';
import { MemoryStorage } from './memory-storage.js';
import { Cacher, type CacherOptions } from './cacher.js';
import { tooOldResourceVersion } from './keys.js';

defineStorageConformance('cacher over memory', async () => {
  const storage = new Cacher({ storage: new MemoryStorage(), progressIntervalMs: 0 });
  await storage.warm('/registry/pods/');                               // a running apiserver's cache has history
  return { storage, teardown: () => storage.close() };
});

/** MemoryStorage that counts underlying watches and lists and can break its watches. */
class CountingStorage extends MemoryStorage {
  watches = 0;
  lists = 0;
  private breakers = new Set<(err: unknown) => void>();
  override async list(...args: Parameters<MemoryStorage['list']>) { this.lists++; return super.list(...args); }
  override watch(prefix: string, opts: StorageWatchOptions): AsyncIterable<StorageEvent> {
    this.watches++;
    const inner = new AbortController();
    opts.signal.addEventListener('abort', () => inner.abort(), { once: true });
    const it = super.watch(prefix, { ...opts, signal: inner.signal })[Symbol.asyncIterator]();
    let broke: (err: unknown) => void = () => undefined;
    let brokeWith: { err: unknown } | undefined;
    const broken = new Promise<never>((_, reject) => { broke = (err) => { brokeWith = { err }; reject(err); }; });
    broken.catch(() => undefined);
    this.breakers.add(broke);
    const breakers = this.breakers;
    return (async function* () {
      try {
        for (;;) {
          if (brokeWith) throw brokeWith.err;
          const r = await Promise.race([it.next(), broken]);
          if (r.done) return;
          yield r.value;
        }
      } finally { breakers.delete(broke); inner.abort(); }
    })();
  }
  breakWatches(err: unknown): void { for (const b of [...this.breakers]) b(err); }
}

const pod = (name: string, labels: Record<string, string> = {}, ns = 'default'): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels } });
const key = (name: string, ns = 'default') => `/registry/pods/${ns}/${name}`;
const describeEv = (e: StorageEvent) => `${e.type} ${e.object.metadata.name}`;

async function fixture(opts: Partial<CacherOptions> = {}) {
  const under = new CountingStorage();
  const cacher = new Cacher({ storage: under, progressIntervalMs: 0, ...opts });
  await cacher.warm('/registry/pods/');
  const ctl = new AbortController();
  setMaxListeners(0, ctl.signal);                                      // 100 watchers share it
  return { under, cacher, signal: ctl.signal, async close() { ctl.abort(); await cacher.close(); } };
}

/** Waits until the cacher has seen the store's current revision (events reach it asynchronously). */
async function synced(f: { under: MemoryStorage; cacher: Cacher }): Promise<void> {
  const rv = await f.under.currentResourceVersion();
  const c = new AbortController();
  const w = f.cacher.watch('/registry/pods/', { resourceVersion: '0', signal: c.signal, onProgress: () => undefined });
  void w;
  c.abort();
  for (let i = 0; i < 1000; i++) {
    const l = await f.cacher.list('/registry/pods/', { resourceVersion: '0' });
    if (BigInt(l.resourceVersion) >= BigInt(rv)) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error('cacher did not catch up');
}

describe('Cacher', () => {
  test('serves 100 watchers from one underlying watch, and each gets every event', async () => {
    const f = await fixture();
    try {
      const start = await f.under.currentResourceVersion();
      const watchers = Array.from({ length: 100 }, () => f.cacher.watch('/registry/pods/', { resourceVersion: start, signal: f.signal }));
      for (let i = 0; i < 5; i++) await f.cacher.create(key(`p${i}`), pod(`p${i}`));
      await f.cacher.delete(key('p0'));
      const want = ['ADDED p0', 'ADDED p1', 'ADDED p2', 'ADDED p3', 'ADDED p4', 'DELETED p0'];
      for (const w of watchers) assert.deepEqual((await take(w, 6)).map(describeEv), want);
      assert.equal(f.under.watches, 1);
      assert.equal(f.cacher.stats().resources, 1);
    } finally { await f.close(); }
  });

  test('a namespace watch sees only its namespace, from the shared resource watch', async () => {
    const f = await fixture();
    try {
      const w = f.cacher.watch('/registry/pods/a/', { resourceVersion: await f.under.currentResourceVersion(), signal: f.signal });
      await f.cacher.create(key('x', 'b'), pod('x', {}, 'b'));
      await f.cacher.create(key('y', 'a'), pod('y', {}, 'a'));
      assert.deepEqual((await take(w, 1)).map(describeEv), ['ADDED y']);
      assert.equal(f.under.watches, 1);
    } finally { await f.close(); }
  });

  test('watch without resourceVersion replays the cached state as ADDED, filtered by the predicate', async () => {
    const f = await fixture();
    try {
      await f.cacher.create(key('a'), pod('a', { app: 'web' }));
      await f.cacher.create(key('b'), pod('b', { app: 'db' }));
      await synced(f);
      const web = (o: KubeObject) => o.metadata.labels?.['app'] === 'web';
      const w = f.cacher.watch('/registry/pods/', { signal: f.signal, predicate: web });
      assert.deepEqual((await take(w, 1)).map(describeEv), ['ADDED a']);
      await f.cacher.guaranteedUpdate(key('b'), (c) => ({ ...c!, metadata: { ...c!.metadata, labels: { app: 'web' } } }));
      await f.cacher.guaranteedUpdate(key('a'), (c) => ({ ...c!, metadata: { ...c!.metadata, labels: { app: 'db' } } }));
      const evs = await take(w, 2);
      assert.deepEqual(evs.map(describeEv), ['ADDED b', 'DELETED a']);
      assert.deepEqual(evs[1]!.object.metadata.labels, { app: 'web' }, 'DELETED carries the last matching state');
    } finally { await f.close(); }
  });

  test('a resourceVersion older than the event window is Expired', async () => {
    const f = await fixture({ capacity: 3 });
    try {
      const first = await f.cacher.create(key('a'), pod('a'));
      for (let i = 0; i < 5; i++) await f.cacher.guaranteedUpdate(key('a'), (c) => ({ ...c!, metadata: { ...c!.metadata, labels: { i: String(i) } } }));
      await synced(f);
      const w = f.cacher.watch('/registry/pods/', { resourceVersion: first.metadata.resourceVersion!, signal: f.signal });
      await assert.rejects(take(w, 1), (e: unknown) => isResourceExpired(e) && /^too old resource version: \d+ \(\d+\)$/.test((e as Error).message));
      // The newest events are still replayable.
      const recent = String(Number(await f.under.currentResourceVersion()) - 2);
      assert.deepEqual((await take(f.cacher.watch('/registry/pods/', { resourceVersion: recent, signal: f.signal }), 2)).map(describeEv), ['MODIFIED a', 'MODIFIED a']);
    } finally { await f.close(); }
  });

  test('a slow watcher is ended without holding back the others', async () => {
    const f = await fixture({ watcherBufferSize: 3 });
    try {
      const rv = await f.under.currentResourceVersion();
      const slow = f.cacher.watch('/registry/pods/', { resourceVersion: rv, signal: f.signal });
      const fast = f.cacher.watch('/registry/pods/', { resourceVersion: rv, signal: f.signal });
      const fastDone = take(fast, 10);
      for (let i = 0; i < 10; i++) await f.cacher.create(key(`p${i}`), pod(`p${i}`));
      assert.equal((await fastDone).length, 10);
      const got: string[] = [];
      for await (const e of slow) got.push(describeEv(e));            // drains what it had, then ends
      assert.ok(got.length >= 3 && got.length < 10, `slow watcher got ${got.length}`);
      assert.deepEqual(got, ['ADDED p0', 'ADDED p1', 'ADDED p2', 'ADDED p3', 'ADDED p4', 'ADDED p5', 'ADDED p6', 'ADDED p7', 'ADDED p8', 'ADDED p9'].slice(0, got.length));
    } finally { await f.close(); }
  });

  test('replaying the event window does not count against a watcher\'s buffer', async () => {
    const f = await fixture({ capacity: 50, watcherBufferSize: 5 });
    try {
      const rv = await f.under.currentResourceVersion();
      for (let i = 0; i < 20; i++) await f.cacher.create(key(`p${i}`), pod(`p${i}`));
      await synced(f);
      const w = f.cacher.watch('/registry/pods/', { resourceVersion: rv, signal: f.signal });
      assert.equal((await take(w, 20)).length, 20);
    } finally { await f.close(); }
  });

  test('sends progress with the current revision to idle watchers, never ahead of their events', async () => {
    const clock = new FakeClock();
    const f = await fixture({ clock, progressIntervalMs: 1000 });
    try {
      const marks: string[] = [];
      const seen: string[] = [];
      const w = f.cacher.watch('/registry/pods/', { resourceVersion: await f.under.currentResourceVersion(), signal: f.signal, onProgress: (rv) => marks.push(`${seen.length}@${rv}`) });
      const b = await f.cacher.create(key('b'), pod('b'));
      await synced(f);
      clock.step(1000);                                                // b is still queued: no mark yet
      assert.equal(marks.length, 0);
      seen.push(...(await take(w, 1)).map(describeEv));
      f.under.notifyProgress();                                        // underlying store vouches for its revision
      await f.cacher.create('/registry/nodes/n1', { metadata: { name: 'n1' } });   // another resource moves the revision
      f.under.notifyProgress();
      for (let i = 0; i < 100 && marks.length === 0; i++) { clock.step(1000); await new Promise((r) => setImmediate(r)); }
      const it = w[Symbol.asyncIterator]();
      const pending = it.next();                                       // pulling delivers the queued mark
      await new Promise((r) => setImmediate(r));
      assert.equal(marks.length, 1);
      const [after, rv] = marks[0]!.split('@');
      assert.ok(BigInt(rv!) >= BigInt(b.metadata.resourceVersion!));
      assert.equal(after, '1', 'the mark came after the event');
      void pending;
    } finally { await f.close(); }
  });

  test('resumes the underlying watch after it breaks, without gaps', async () => {
    const f = await fixture({ retryBackoffMs: [1, 1] });
    try {
      const w = f.cacher.watch('/registry/pods/', { resourceVersion: await f.under.currentResourceVersion(), signal: f.signal });
      await f.cacher.create(key('a'), pod('a'));
      f.under.breakWatches(new Error('connection reset'));
      await f.cacher.create(key('b'), pod('b'));
      await f.cacher.create(key('c'), pod('c'));
      assert.deepEqual((await take(w, 3)).map(describeEv), ['ADDED a', 'ADDED b', 'ADDED c']);
      assert.ok(f.under.watches >= 2);
      assert.equal(f.under.lists, 1, 'resumed, not relisted');
    } finally { await f.close(); }
  });

  test('relists when the underlying watch expires and ends current watchers with Expired', async () => {
    const f = await fixture({ retryBackoffMs: [1, 1] });
    try {
      await f.cacher.create(key('a'), pod('a'));
      await synced(f);
      const w = f.cacher.watch('/registry/pods/', { resourceVersion: await f.under.currentResourceVersion(), signal: f.signal });
      f.under.breakWatches(tooOldResourceVersion(1, 2));
      await assert.rejects(take(w, 1), isResourceExpired);
      await f.cacher.create(key('b'), pod('b'));
      const w2 = f.cacher.watch('/registry/pods/', { signal: f.signal });
      assert.deepEqual((await take(w2, 2)).map(describeEv).sort(), ['ADDED a', 'ADDED b']);
      assert.equal(f.under.lists, 2);
    } finally { await f.close(); }
  });

  test('list with resourceVersion 0 is served from the cache; other lists from storage', async () => {
    const f = await fixture();
    try {
      await f.cacher.create(key('a'), pod('a', { app: 'web' }));
      await f.cacher.create(key('b'), pod('b'));
      await synced(f);
      const lists = f.under.lists;
      const cached = await f.cacher.list('/registry/pods/', { resourceVersion: '0', predicate: (o) => o.metadata.labels?.['app'] === 'web' });
      assert.deepEqual(cached.items.map((i) => i.metadata.name), ['a']);
      assert.equal(f.under.lists, lists);
      assert.throws(() => { (cached.items[0]!.metadata as { name: string }).name = 'x'; }, TypeError, 'cached objects are frozen');
      await f.cacher.list('/registry/pods/', { limit: 1 });
      assert.equal(f.under.lists, lists + 1);
    } finally { await f.close(); }
  });

  test('a consistent list is served from the cache once it has caught up, and reflects every acknowledged write', async () => {
    const f = await fixture();
    try {
      const lists = f.under.lists;
      // No synced(): the cache may still be behind the write; the list must wait for it.
      await f.cacher.create(key('a'), pod('a'));
      const first = await f.cacher.list('/registry/pods/', {});
      assert.deepEqual(first.items.map((i) => i.metadata.name), ['a']);
      // A write elsewhere advances the store's revision past the pods cache: a progress request catches it up.
      const other = await f.cacher.create('/registry/configmaps/default/x', { metadata: { name: 'x', namespace: 'default' } });
      const second = await f.cacher.list('/registry/pods/', {});
      assert.deepEqual(second.items.map((i) => i.metadata.name), ['a']);
      assert.ok(Number(second.resourceVersion) >= Number(other.metadata.resourceVersion), second.resourceVersion);
      await f.cacher.delete(key('a'));
      assert.deepEqual((await f.cacher.list('/registry/pods/', {})).items, []);
      assert.equal(f.under.lists, lists, 'served from the cache');
    } finally { await f.close(); }
  });

  test('cached lists stay sorted by key and scoped to their prefix across adds and deletes', async () => {
    const f = await fixture();
    try {
      const names = (l: { items: KubeObject[] }) => l.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`);
      for (const [n, ns] of [['c', 'b'], ['a', 'b'], ['z', 'a'], ['b', 'b'], ['x', 'bb']] as const) await f.cacher.create(key(n, ns), pod(n, {}, ns));
      await synced(f);
      assert.deepEqual(names(await f.cacher.list('/registry/pods/b/', { resourceVersion: '0' })), ['b/a', 'b/b', 'b/c']);
      await f.cacher.create(key('aa', 'b'), pod('aa', {}, 'b'));
      await f.cacher.delete(key('b', 'b'));
      await synced(f);
      assert.deepEqual(names(await f.cacher.list('/registry/pods/b/', { resourceVersion: '0' })), ['b/a', 'b/aa', 'b/c']);
      assert.deepEqual(names(await f.cacher.list('/registry/pods/', { resourceVersion: '0' })), ['a/z', 'b/a', 'b/aa', 'b/c', 'bb/x']);
      assert.deepEqual(names(await f.cacher.list('/registry/pods/c/', { resourceVersion: '0' })), []);
    } finally { await f.close(); }
  });

  test('get with resourceVersion 0 is served from the cache (NotFound if it lacks the key); plain get reads the store', async () => {
    const f = await fixture();
    try {
      await f.cacher.create(key('a'), pod('a'));
      await synced(f);
      await f.under.guaranteedUpdate(key('a'), (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { v: '2' } } }));
      const fromStore = await f.cacher.get(key('a'));
      assert.equal(fromStore.metadata.labels?.['v'], '2');
      const cached = await f.cacher.get(key('a'), { resourceVersion: '0' });
      assert.ok(Object.isFrozen(cached), 'served from the cache');
      await synced(f);
      assert.equal((await f.cacher.get(key('a'), { resourceVersion: '0' })).metadata.labels?.['v'], '2');
      await assert.rejects(f.cacher.get(key('missing'), { resourceVersion: '0' }), (err: unknown) => (err as { reason?: string }).reason === 'NotFound');
    } finally { await f.close(); }
  });

  test('consistentListFromCache: false reads every consistent list from the store', async () => {
    const f = await fixture({ consistentListFromCache: false });
    try {
      const lists = f.under.lists;
      await f.cacher.list('/registry/pods/', {});
      assert.equal(f.under.lists, lists + 1);
    } finally { await f.close(); }
  });
});
