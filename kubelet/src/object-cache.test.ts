import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@mk8s/component-base/testing';
import { ObjectCache } from './object-cache.js';

function fixture() {
  const clock = new FakeClock();
  const fetches: string[] = [];
  const store = new Map<string, string>([['ns/a', 'A1']]);
  let fail = false;
  const pending: (() => void)[] = [];
  let hold = false;
  const cache = new ObjectCache<string>({
    clock, ttlMs: 5_000,
    fetch: async (ns, name) => {
      fetches.push(`${ns}/${name}`);
      if (hold) await new Promise<void>((r) => pending.push(r));
      if (fail) throw new Error('apiserver down');
      return store.get(`${ns}/${name}`);
    },
  });
  return { clock, cache, fetches, store, release: () => { for (const r of pending.splice(0)) r(); }, setHold: (h: boolean) => { hold = h; }, setFail: (f: boolean) => { fail = f; } };
}

test('reads while a fetch is in flight share it; reads within the TTL come from the cache', async () => {
  const f = fixture();
  f.setHold(true);
  const reads = Array.from({ length: 110 }, () => f.cache.get('ns', 'a'));
  f.release();
  assert.deepEqual(await Promise.all(reads), Array(110).fill('A1'));
  assert.equal(f.fetches.length, 1, 'a burst of 110 pods makes one GET');
  f.setHold(false);
  f.store.set('ns/a', 'A2');
  f.clock.step(4_999);
  assert.equal(await f.cache.get('ns', 'a'), 'A1');
  assert.equal(f.fetches.length, 1);
  f.clock.step(1);
  assert.equal(await f.cache.get('ns', 'a'), 'A2', 'a change is seen once the TTL is over');
  assert.equal(f.fetches.length, 2);
});

test('a missing object and an error are not cached', async () => {
  const f = fixture();
  assert.equal(await f.cache.get('ns', 'b'), undefined);
  f.store.set('ns/b', 'B1');
  assert.equal(await f.cache.get('ns', 'b'), 'B1', 'created after a pod asked: the next read sees it');
  assert.equal(f.fetches.length, 2);
  f.setFail(true);
  await assert.rejects(f.cache.get('ns', 'c'), /apiserver down/);
  f.setFail(false);
  f.store.set('ns/c', 'C1');
  assert.equal(await f.cache.get('ns', 'c'), 'C1');
  assert.equal(f.cache.size, 2);
});

test('prune drops entries older than the TTL', async () => {
  const f = fixture();
  await f.cache.get('ns', 'a');
  f.cache.prune();
  assert.equal(f.cache.size, 1);
  f.clock.step(5_000);
  f.cache.prune();
  assert.equal(f.cache.size, 0);
});

test('keep: an object it refuses is not cached (read again next time), one it accepts is', async () => {
  const clock = new FakeClock();
  const store = new Map<string, string>([['ns/c', 'Pending']]);
  let fetches = 0;
  const cache = new ObjectCache<string>({ clock, ttlMs: 5_000, keep: (v) => v === 'Bound', fetch: async (ns, name) => { fetches++; return store.get(`${ns}/${name}`); } });
  assert.equal(await cache.get('ns', 'c'), 'Pending');
  assert.equal(cache.size, 0);
  store.set('ns/c', 'Bound');
  assert.equal(await cache.get('ns', 'c'), 'Bound', 'seen at once, not after the TTL');
  assert.equal(await cache.get('ns', 'c'), 'Bound');
  assert.equal(fetches, 2, 'the Bound one comes from the cache');
});
