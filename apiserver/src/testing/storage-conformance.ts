/**
 * One conformance suite for every Storage (STYLE example 6; upstream storage/testing/store_tests.go).
 * Each test works under its own namespace prefix, so a shared etcd cluster needs no wiping.
 */
import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { isAlreadyExists, isConflict, isNotFound, isResourceExpired, type KubeObject } from '@mk8s/api';
import type { Storage, StorageEvent } from '../storage/interfaces.js';

export interface StorageConformanceFixture {
  storage: Storage;
  teardown(): Promise<void>;
  /** Compacts history before revision (etcd compaction); enables the Expired tests. */
  compact?(revision: string): Promise<void>;
}

let seq = 0;

/** Defines the storage conformance tests for one implementation. */
export function defineStorageConformance(name: string, setup: () => Promise<StorageConformanceFixture>): void {
  describe(`Storage conformance: ${name}`, () => {
    let f: StorageConformanceFixture;
    let s: Storage;
    let prefix: string;
    let ctl: AbortController;
    const key = (n: string) => `${prefix}${n}`;
    beforeEach(async () => {
      f = await setup();
      s = f.storage;
      prefix = `/registry/pods/conf-${process.pid}-${Date.now().toString(36)}-${seq++}/`;
      ctl = new AbortController();
    });
    afterEach(async () => { ctl.abort(); await f.teardown(); });

    test('create stores the object and sets resourceVersion', async () => {
      const out = await s.create(key('a'), pod('a'));
      assert.match(out.metadata.resourceVersion ?? '', /^\d+$/);
      const got = await s.get(key('a'));
      assert.equal(got.metadata.resourceVersion, out.metadata.resourceVersion);
      assert.deepEqual(got.spec, { n: 0 });
    });

    test('create of an existing key fails with AlreadyExists', async () => {
      await s.create(key('a'), pod('a'));
      await assert.rejects(s.create(key('a'), pod('a')), isAlreadyExists);
    });

    test('create ignores a resourceVersion on the input object', async () => {
      const out = await s.create(key('a'), { ...pod('a'), metadata: { name: 'a', resourceVersion: '999999999' } });
      assert.notEqual(out.metadata.resourceVersion, '999999999');
    });

    test('get of a missing key fails with NotFound', async () => {
      await assert.rejects(s.get(key('missing')), isNotFound);
    });

    test('list returns every object under the prefix sorted by key, at the header revision', async () => {
      for (const n of ['c', 'a', 'b']) await s.create(key(n), pod(n));
      await s.create(`${prefix.slice(0, -1)}x/other`, pod('other'));   // a sibling prefix must not leak in
      const list = await s.list(prefix);
      assert.deepEqual(names(list.items), ['a', 'b', 'c']);
      assert.equal(list.continue, undefined);
      assert.ok(BigInt(list.resourceVersion) >= BigInt(list.items[2]!.metadata.resourceVersion!));
    });

    test('count counts the keys under a prefix, not a sibling prefix', async () => {
      assert.ok(s.count, 'implements count (apiserver_storage_objects)');
      for (const n of ['a', 'b', 'c']) await s.create(key(n), pod(n));
      await s.create(`${prefix.slice(0, -1)}x/other`, pod('other'));
      assert.equal(await s.count(prefix), 3);
      await s.delete(key('b'));
      assert.equal(await s.count(prefix), 2);
    });

    test('list pages with limit and continue at one consistent revision', async () => {
      for (const n of ['a', 'b', 'c', 'd', 'e']) await s.create(key(n), pod(n));
      const p1 = await s.list(prefix, { limit: 2 });
      assert.deepEqual(names(p1.items), ['a', 'b']);
      assert.ok(p1.continue);
      assert.equal(p1.remainingItemCount, 3);
      await s.create(key('f'), pod('f'));                                 // after the snapshot: not listed
      await s.delete(key('e'));                                           // deleted after the snapshot: still listed
      const p2 = await s.list(prefix, { limit: 2, continue: p1.continue });
      assert.deepEqual(names(p2.items), ['c', 'd']);
      assert.equal(p2.resourceVersion, p1.resourceVersion);
      const p3 = await s.list(prefix, { limit: 2, continue: p2.continue! });
      assert.deepEqual(names(p3.items), ['e']);
      assert.equal(p3.continue, undefined);
    });

    test('list applies the predicate before paging', async () => {
      for (let i = 0; i < 6; i++) await s.create(key(`p${i}`), pod(`p${i}`, i));
      const even = (o: KubeObject) => ((o.spec as { n: number }).n % 2) === 0;
      const p1 = await s.list(prefix, { limit: 2, predicate: even });
      assert.deepEqual(names(p1.items), ['p0', 'p2']);
      const p2 = await s.list(prefix, { limit: 2, predicate: even, continue: p1.continue! });
      assert.deepEqual(names(p2.items), ['p4']);
    });

    test('list with an invalid continue token fails with BadRequest', async () => {
      await assert.rejects(s.list(prefix, { limit: 1, continue: 'not-a-token' }), (e: unknown) => (e as { code?: number }).code === 400);
    });

    test('guaranteedUpdate writes the new state with a new resourceVersion', async () => {
      const a = await s.create(key('a'), pod('a'));
      const b = await s.guaranteedUpdate(key('a'), (cur) => bump(cur!));
      assert.deepEqual(b.spec, { n: 1 });
      assert.ok(BigInt(b.metadata.resourceVersion!) > BigInt(a.metadata.resourceVersion!));
      assert.deepEqual((await s.get(key('a'))).spec, { n: 1 });
    });

    test('guaranteedUpdate that changes nothing keeps the resourceVersion', async () => {
      const a = await s.create(key('a'), pod('a'));
      const b = await s.guaranteedUpdate(key('a'), (cur) => cur!);
      assert.equal(b.metadata.resourceVersion, a.metadata.resourceVersion);
    });

    test('guaranteedUpdate re-runs tryUpdate after a concurrent write (no lost update)', async () => {
      await s.create(key('counter'), pod('counter'));
      const n = 10;
      let calls = 0;
      await Promise.all(Array.from({ length: n }, () => s.guaranteedUpdate(key('counter'), async (cur) => {
        calls++;
        await new Promise((r) => setImmediate(r));                         // let the other writers interleave
        return bump(cur!);
      })));
      assert.deepEqual((await s.get(key('counter'))).spec, { n });
      assert.ok(calls > n, `expected retries, got ${calls} calls for ${n} updates`);
    });

    test('guaranteedUpdate of a missing key fails with NotFound, or creates with ignoreNotFound', async () => {
      await assert.rejects(s.guaranteedUpdate(key('a'), (cur) => bump(cur!)), isNotFound);
      const out = await s.guaranteedUpdate(key('a'), (cur) => { assert.equal(cur, undefined); return pod('a', 7); }, { ignoreNotFound: true });
      assert.deepEqual(out.spec, { n: 7 });
      assert.deepEqual((await s.get(key('a'))).spec, { n: 7 });
    });

    test('guaranteedUpdate propagates an error thrown by tryUpdate and writes nothing', async () => {
      const a = await s.create(key('a'), pod('a'));
      await assert.rejects(s.guaranteedUpdate(key('a'), () => { throw new Error('boom'); }), /boom/);
      assert.equal((await s.get(key('a'))).metadata.resourceVersion, a.metadata.resourceVersion);
    });

    test('guaranteedUpdate with a suggestion: current, stale, unchanged-but-stale and deleted all end on the stored state', async () => {
      const a = await s.create(key('a'), pod('a'));
      const b = await s.guaranteedUpdate(key('a'), (cur) => bump(cur!), { suggestion: a });
      assert.deepEqual(b.spec, { n: 1 });
      // a is stale now: the update must still apply to b's state, not a's.
      const seen: unknown[] = [];
      const c = await s.guaranteedUpdate(key('a'), (cur) => { seen.push(cur!.spec); return bump(cur!); }, { suggestion: a });
      assert.deepEqual(c.spec, { n: 2 });
      assert.deepEqual((await s.get(key('a'))).spec, { n: 2 });
      // tryUpdate rejecting the stale copy (a client's resourceVersion precondition) is re-run on the stored state.
      const d = await s.guaranteedUpdate(key('a'), (cur) => {
        if (cur!.metadata.resourceVersion !== c.metadata.resourceVersion) throw new Error('conflict on the stale copy');
        return bump(cur!);
      }, { suggestion: a });
      assert.deepEqual(d.spec, { n: 3 });
      // "Unchanged" judged against a stale copy is no proof: a's spec written back is a real change.
      const e = await s.guaranteedUpdate(key('a'), () => ({ ...a, spec: { n: 0 } }), { suggestion: a });
      assert.deepEqual(e.spec, { n: 0 });
      assert.ok(BigInt(e.metadata.resourceVersion!) > BigInt(d.metadata.resourceVersion!));
      // The suggestion is never changed by tryUpdate.
      const copy = structuredClone(e);
      await s.guaranteedUpdate(key('a'), (cur) => { (cur!.spec as { n: number }).n = 9; return cur!; }, { suggestion: e });
      assert.deepEqual(e, copy);
      assert.deepEqual((await s.get(key('a'))).spec, { n: 9 });
      // Deleted since the cache saw it: NotFound, not a resurrection.
      const last = await s.get(key('a'));
      await s.delete(key('a'));
      await assert.rejects(s.guaranteedUpdate(key('a'), (cur) => bump(cur!), { suggestion: last }), isNotFound);
      await assert.rejects(s.get(key('a')), isNotFound);
    });

    test('failed preconditions fail with Conflict', async () => {
      const a = await s.create(key('a'), pod('a'));
      await assert.rejects(s.guaranteedUpdate(key('a'), (c) => bump(c!), { preconditions: { uid: 'other' } }), isConflict);
      await assert.rejects(s.guaranteedUpdate(key('a'), (c) => bump(c!), { preconditions: { resourceVersion: '1' } }), isConflict);
      await assert.rejects(s.delete(key('a'), { preconditions: { uid: 'other' } }), isConflict);
      await assert.rejects(s.delete(key('a'), { preconditions: { resourceVersion: '1' } }), isConflict);
      const ok = await s.guaranteedUpdate(key('a'), (c) => bump(c!), { preconditions: { uid: 'uid-a', resourceVersion: a.metadata.resourceVersion! } });
      assert.deepEqual(ok.spec, { n: 1 });
    });

    test('delete returns the last state and removes the key', async () => {
      await s.create(key('a'), pod('a'));
      const u = await s.guaranteedUpdate(key('a'), (c) => bump(c!));
      const last = await s.delete(key('a'));
      assert.deepEqual(last.spec, { n: 1 });
      assert.equal(last.metadata.resourceVersion, u.metadata.resourceVersion);
      await assert.rejects(s.get(key('a')), isNotFound);
      await assert.rejects(s.delete(key('a')), isNotFound);
    });

    test('delete runs validateDeletion against the current state and aborts when it throws', async () => {
      await s.create(key('a'), pod('a'));
      await assert.rejects(s.delete(key('a'), { validateDeletion: (cur) => { assert.equal(cur.metadata.name, 'a'); throw new Error('nope'); } }), /nope/);
      await s.get(key('a'));
    });

    test('currentResourceVersion moves with writes', async () => {
      const before = BigInt(await s.currentResourceVersion());
      const a = await s.create(key('a'), pod('a'));
      const after = BigInt(await s.currentResourceVersion());
      assert.ok(after > before);
      assert.ok(after >= BigInt(a.metadata.resourceVersion!));
    });

    test('watch from a resourceVersion replays only later events, in order', async () => {
      await s.create(key('a'), pod('a'));
      const b = await s.create(key('b'), pod('b'));
      await s.guaranteedUpdate(key('a'), (c) => bump(c!));
      await s.delete(key('b'));
      const w = s.watch(prefix, { resourceVersion: b.metadata.resourceVersion!, signal: ctl.signal });
      const evs = await take(w, 2);
      assert.deepEqual(evs.map((e) => `${e.type} ${e.object.metadata.name}`), ['MODIFIED a', 'DELETED b']);
      assert.ok(BigInt(evs[0]!.resourceVersion) < BigInt(evs[1]!.resourceVersion));
      await s.create(key('c'), pod('c'));
      const [live] = await take(w, 1);
      assert.equal(`${live!.type} ${live!.object.metadata.name}`, 'ADDED c');
      assert.equal(live!.object.metadata.resourceVersion, live!.resourceVersion);
    });

    test('watch without resourceVersion starts with synthetic ADDED for existing objects', async () => {
      await s.create(key('a'), pod('a'));
      await s.create(key('b'), pod('b'));
      for (const rv of [undefined, '0']) {
        const c = new AbortController();
        const w = s.watch(prefix, rv === undefined ? { signal: c.signal } : { resourceVersion: rv, signal: c.signal });
        const evs = await take(w, 2);
        assert.deepEqual(evs.map((e) => `${e.type} ${e.object.metadata.name}`).sort(), ['ADDED a', 'ADDED b']);
        await s.guaranteedUpdate(key('a'), (x) => bump(x!));
        const [m] = await take(w, 1);
        assert.equal(`${m!.type} ${m!.object.metadata.name}`, 'MODIFIED a');
        c.abort();
      }
    });

    test('watch DELETED carries the last state at the deletion revision, and prevObject', async () => {
      const w = s.watch(prefix, { resourceVersion: await s.currentResourceVersion(), signal: ctl.signal });
      await s.create(key('a'), pod('a', 3));
      await s.delete(key('a'));
      const [added, deleted] = await take(w, 2);
      assert.equal(added!.type, 'ADDED');
      assert.equal(deleted!.type, 'DELETED');
      assert.deepEqual(deleted!.object.spec, { n: 3 });
      assert.equal(deleted!.object.metadata.resourceVersion, deleted!.resourceVersion);
      assert.ok(BigInt(deleted!.resourceVersion) > BigInt(added!.resourceVersion));
      assert.equal(deleted!.prevObject?.metadata.resourceVersion, added!.resourceVersion);
    });

    test('watch MODIFIED carries prevObject', async () => {
      const a = await s.create(key('a'), pod('a'));
      const w = s.watch(prefix, { resourceVersion: a.metadata.resourceVersion!, signal: ctl.signal });
      await s.guaranteedUpdate(key('a'), (c) => bump(c!));
      const [m] = await take(w, 1);
      assert.deepEqual(m!.object.spec, { n: 1 });
      assert.deepEqual(m!.prevObject?.spec, { n: 0 });
    });

    test('watch with a predicate turns updates into ADDED/DELETED as the object starts/stops matching', async () => {
      const odd = (o: KubeObject) => ((o.spec as { n: number }).n % 2) === 1;
      const a = await s.create(key('a'), pod('a', 0));
      const w = s.watch(prefix, { resourceVersion: a.metadata.resourceVersion!, signal: ctl.signal, predicate: odd });
      await s.guaranteedUpdate(key('a'), (c) => bump(c!));               // 1: starts matching
      await s.guaranteedUpdate(key('a'), (c) => bump(bump(c!)));         // 3: still matching
      const stop = await s.guaranteedUpdate(key('a'), (c) => bump(c!));  // 4: stops matching
      await s.guaranteedUpdate(key('a'), (c) => bump(bump(c!)));         // 6: never seen
      await s.create(key('z'), pod('z', 1));
      const evs = await take(w, 4);
      assert.deepEqual(evs.map((e) => `${e.type} ${e.object.metadata.name} ${(e.object.spec as { n: number }).n}`),
        ['ADDED a 1', 'MODIFIED a 3', 'DELETED a 3', 'ADDED z 1']);
      assert.equal(evs[2]!.object.metadata.resourceVersion, stop.metadata.resourceVersion);
    });

    test('watch ends when the signal aborts', async () => {
      const c = new AbortController();
      const w = s.watch(prefix, { signal: c.signal });
      const it = w[Symbol.asyncIterator]();
      const pending = it.next();
      c.abort();
      assert.equal((await pending).done, true);
    });

    test('watch from a compacted resourceVersion fails with Expired; so does a stale continue', async (t) => {
      if (!f.compact) return t.skip('no compaction hook');
      const a = await s.create(key('a'), pod('a'));
      await s.create(key('b'), pod('b'));
      const page = await s.list(prefix, { limit: 1 });
      for (let i = 0; i < 3; i++) await s.guaranteedUpdate(key('b'), (c) => bump(c!));
      await f.compact(await s.currentResourceVersion());
      await assert.rejects(take(s.watch(prefix, { resourceVersion: a.metadata.resourceVersion!, signal: ctl.signal }), 1), (e: unknown) => {
        assert.ok(isResourceExpired(e), String(e));
        assert.match((e as Error).message, /^too old resource version: \d+ \(\d+\)$/);
        return true;
      });
      await assert.rejects(s.list(prefix, { limit: 1, continue: page.continue! }), isResourceExpired);
      // The current revision still works.
      const w = s.watch(prefix, { resourceVersion: await s.currentResourceVersion(), signal: ctl.signal });
      await s.delete(key('a'));
      assert.equal((await take(w, 1))[0]!.type, 'DELETED');
    });
  });
}

function pod(name: string, n = 0): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, uid: `uid-${name}` }, spec: { n } };
}
function bump(o: KubeObject): KubeObject {
  return { ...o, spec: { n: (o.spec as { n: number }).n + 1 } };
}
const names = (items: KubeObject[]) => items.map((i) => i.metadata.name);

/** Reads n events from a watch, failing after timeoutMs. */
export async function take(w: AsyncIterable<StorageEvent>, n: number, timeoutMs = 10_000): Promise<StorageEvent[]> {
  const it = w[Symbol.asyncIterator]();
  const out: StorageEvent[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out waiting for ${n} events, got ${JSON.stringify(out.map((e) => e.type))}`)), timeoutMs); });
  try {
    while (out.length < n) {
      const r = await Promise.race([it.next(), timeout]);
      if (r.done) throw new Error(`watch ended after ${out.length} of ${n} events`);
      out.push(r.value);
    }
  } finally {
    clearTimeout(timer);
  }
  return out;
}
