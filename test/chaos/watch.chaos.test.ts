/**
 * T2, the watch contract under churn (issue 21). Three writers create, update and delete
 * ConfigMaps (each its own names, each name used once, every acknowledged write logged with the
 * resourceVersion the apiserver answered); four watchers of the namespace have their connections
 * aborted at random and resume from the last resourceVersion they saw (events and bookmarks).
 * Then, with a single apiserver, it is killed -9 (the supervisor restarts it): a resumed watch may
 * then get 410 Expired (the new apiserver's watch cache starts at its own list, as upstream's) and
 * the watcher relists, as every client must. Checked against the writers' log: every acknowledged
 * write seen exactly once, in resourceVersion order, except writes a relist covered (the list
 * then holds the acknowledged state); at the end every watcher's view equals the server's.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, Namespaces, isResourceExpired, type KubeObject, type WatchEvent } from '@mk8s/api';
import { adminClient, apiserverNames, figure, mkctlAsync, supervised, uniqueName, waitFor } from './lib/chaos.js';

type Cm = KubeObject & { data?: Record<string, string> };
const ns = uniqueName('chaos-watch');
const client = adminClient('chaos-t2');
const cms = () => client.resource<Cm>(ConfigMaps, ns);
const rvOf = (o: KubeObject) => Number(o.metadata.resourceVersion);

/** One acknowledged write: its name, kind and (for create/update) the resourceVersion answered. */
interface Ack { name: string; type: 'ADDED' | 'MODIFIED' | 'DELETED'; rv?: number; seq: number }
interface Seen { name: string; type: string; rv: number }
interface Relist { afterRv: number; listRv: number; items: Map<string, number> }

class Watcher {
  readonly seen: Seen[] = [];
  readonly relists: Relist[] = [];
  readonly view = new Map<string, number>();
  /** Events whose RV is not past everything the stream (events, bookmarks, the last relist) had shown. */
  readonly outOfOrder: string[] = [];
  lastRv: number;
  cuts = 0; resumes = 0; expired = 0; errors = 0;
  constructor(readonly id: number, startRv: number, startItems: Map<string, number>) {
    this.lastRv = startRv;
    for (const [k, v] of startItems) this.view.set(k, v);
  }

  async run(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      const cut = new AbortController();
      const onStop = () => cut.abort();
      stop.addEventListener('abort', onStop, { once: true });
      const timer = setTimeout(() => { this.cuts++; cut.abort(); }, 300 + Math.random() * 1700);
      try {
        for await (const ev of cms().watch({ resourceVersion: String(this.lastRv), allowWatchBookmarks: true, signal: cut.signal }) as AsyncIterable<WatchEvent<Cm>>) {
          this.handle(ev);
        }
      } catch (err) {
        if (isResourceExpired(err)) { this.expired++; await this.relist(); } else { this.errors++; await new Promise((r) => setTimeout(r, 200)); }
      } finally {
        clearTimeout(timer);
        stop.removeEventListener('abort', onStop);
      }
      this.resumes++;
    }
  }

  private handle(ev: WatchEvent<Cm>): void {
    const rv = rvOf(ev.object);
    if (ev.type !== 'BOOKMARK') {
      const name = ev.object.metadata.name;
      if (rv <= this.lastRv) this.outOfOrder.push(`${ev.type} ${name}@${rv} after ${this.lastRv}`);
      this.seen.push({ name, type: ev.type, rv });
      if (ev.type === 'DELETED') this.view.delete(name); else this.view.set(name, rv);
    }
    this.lastRv = Math.max(this.lastRv, rv);
  }

  /** What every client does on 410: list afresh, take the list as the truth, watch from its RV. */
  private async relist(): Promise<void> {
    for (;;) {
      try {
        const l = await cms().list();
        const items = new Map(l.items.map((c) => [c.metadata.name, rvOf(c)]));
        const listRv = Number(l.metadata.resourceVersion);
        this.relists.push({ afterRv: this.lastRv, listRv, items });
        this.view.clear();
        for (const [k, v] of items) this.view.set(k, v);
        this.lastRv = listRv;
        return;
      } catch { await new Promise((r) => setTimeout(r, 200)); }
    }
  }
}

interface Verdict { missing: string[]; duplicate: string[]; outOfOrder: string[]; relistWrong: string[] }

/** The contract, checked for one watcher against the writers' log (pure). */
function verdict(w: Watcher, acks: Ack[], tainted: Set<string>): Verdict {
  const v: Verdict = { missing: [], duplicate: [], outOfOrder: [], relistWrong: [] };
  v.outOfOrder.push(...w.outOfOrder);
  const count = new Map<string, number>();
  for (const s of w.seen) {
    const k = s.type === 'DELETED' ? `DELETED ${s.name}` : `${s.type} ${s.name}@${s.rv}`;
    count.set(k, (count.get(k) ?? 0) + 1);
  }
  for (const [k, n] of count) if (n > 1) v.duplicate.push(`${k} x${n}`);
  // A gap is what a 410 hid: (the watcher's RV at the failure, the relist's RV].
  const gaps = w.relists.map((r) => [r.afterRv, r.listRv] as const);
  const inGap = (rv: number) => gaps.some(([a, b]) => rv > a && rv <= b);
  const lastWriteRv = new Map<string, number>();
  for (const a of acks) if (a.rv !== undefined) lastWriteRv.set(a.name, Math.max(lastWriteRv.get(a.name) ?? 0, a.rv));
  for (const a of acks) {
    if (a.type !== 'DELETED') {
      if (count.has(`${a.type} ${a.name}@${a.rv}`) || inGap(a.rv!)) continue;
      v.missing.push(`${a.type} ${a.name}@${a.rv}`);
    } else {
      if (count.has(`DELETED ${a.name}`)) continue;
      // Covered when a relist after the object's last write no longer held it.
      if (w.relists.some((r) => r.listRv >= (lastWriteRv.get(a.name) ?? 0) && !r.items.has(a.name))) continue;
      v.missing.push(`DELETED ${a.name}`);
    }
  }
  // A relist must hold the acknowledged state at its RV: the last acknowledged write at or before it.
  for (const r of w.relists) {
    for (const [name, rv] of r.items) {
      if (!name.startsWith('w') || tainted.has(name)) continue;
      const want = Math.max(0, ...acks.filter((a) => a.name === name && a.rv !== undefined && a.rv <= r.listRv).map((a) => a.rv!));
      if (want !== rv) v.relistWrong.push(`${name}: list@${r.listRv} has ${rv}, acknowledged ${want}`);
    }
  }
  return v;
}

before(async () => {
  await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});
after(async () => { await client.resource(Namespaces).delete(ns).catch(() => undefined); });

test('T2: watchers cut and resumed under churn miss, repeat and reorder no event', { timeout: 420_000 }, async () => {
  const WRITERS = 3, WATCHERS = 4;
  const acks: Ack[] = [];
  const tainted = new Set<string>();
  let seq = 0, writeFailures = 0;
  const start = await cms().list();
  const startRv = Number(start.metadata.resourceVersion);
  const startItems = new Map(start.items.map((c) => [c.metadata.name, rvOf(c)]));
  const watchers = Array.from({ length: WATCHERS }, (_, i) => new Watcher(i, startRv, startItems));
  const stopWatch = new AbortController();
  const watching = watchers.map((w) => w.run(stopWatch.signal));

  let stopWriters = false;
  const writer = async (id: number) => {
    const live = new Map<string, Cm>();
    let n = 0;
    while (!stopWriters) {
      const r = Math.random();
      const names = [...live.keys()];
      let name = '';
      try {
        if (names.length < 3 || r < 0.35) {
          name = `w${id}-${n++}`;
          const c = await cms().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { v: '0' } });
          acks.push({ name, type: 'ADDED', rv: rvOf(c), seq: seq++ }); live.set(name, c);
        } else if (r < 0.8) {
          name = names[Math.floor(Math.random() * names.length)]!;
          const cur = live.get(name)!;
          const c = await cms().update({ ...cur, data: { v: String(Number(cur.data?.['v'] ?? 0) + 1) } });
          acks.push({ name, type: 'MODIFIED', rv: rvOf(c), seq: seq++ }); live.set(name, c);
        } else {
          name = names[Math.floor(Math.random() * names.length)]!;
          await cms().delete(name);
          acks.push({ name, type: 'DELETED', seq: seq++ }); live.delete(name);
        }
      } catch {
        // Unacknowledged: it may or may not have happened. The name is left alone from now on.
        writeFailures++; tainted.add(name); live.delete(name);
        await new Promise((res) => setTimeout(res, 200));
      }
    }
  };
  const writing = Array.from({ length: WRITERS }, (_, i) => writer(i));
  try {

  await waitFor(() => acks.length >= 300 && watchers.every((w) => w.cuts >= 3), { timeoutMs: 180_000, what: '300 writes and 3 cuts per watcher' });
  const phase1Acks = acks.length;
  let killed = '';
  const apiservers = apiserverNames();
  if (apiservers.length === 1) {
    const name = apiservers[0]!;
    const before = supervised()[name];
    // Asynchronously: the watchers and writers of this process go on while mkctl runs.
    const k = await mkctlAsync(['chaos', 'kill', name]).done;
    assert.equal(k.code, 0, k.out);
    killed = name;
    await waitFor(() => { const s = supervised()[name]; return s?.state === 'running' && s.pid !== before?.pid; }, { timeoutMs: 120_000, what: `${name} restarted by the supervisor` });
    await waitFor(() => acks.length >= phase1Acks + 150, { timeoutMs: 180_000, what: 'writes after the apiserver restart' });
  } else {
    await waitFor(() => acks.length >= phase1Acks + 150, { timeoutMs: 180_000, what: 'more writes' });
  }
  stopWriters = true;
  await Promise.all(writing);

  // Converge: every watcher's view equal to the server's.
  const final = await waitFor(async () => {
    const l = await cms().list();
    const want = new Map(l.items.map((c) => [c.metadata.name, rvOf(c)]));
    const same = (m: Map<string, number>) => m.size === want.size && [...want].every(([k, v]) => m.get(k) === v);
    return watchers.every((w) => same(w.view)) ? want : undefined;
  }, { timeoutMs: 90_000, what: 'every watcher converged on the server state' }).catch((err: unknown) => { console.log(String(err)); return undefined; });
  stopWatch.abort();
  await Promise.all(watching);

  const vs = watchers.map((w) => verdict(w, acks, tainted));
  const sum = (f: (v: Verdict) => string[]) => vs.reduce((s, v) => s + f(v).length, 0);
  const missing = sum((v) => v.missing), duplicate = sum((v) => v.duplicate), ooo = sum((v) => v.outOfOrder), wrong = sum((v) => v.relistWrong);
  const events = watchers.reduce((s, w) => s + w.seen.length, 0);
  figure('T2', 'watch missing events', missing, '0', `duplicate ${duplicate} (goal 0); out-of-order ${ooo} (goal 0); relists holding a wrong state ${wrong} (goal 0)`);
  figure('T2', 'watch load', `${acks.length} acknowledged writes by ${WRITERS} writers, ${events} events to ${WATCHERS} watchers`, undefined,
    `cuts ${watchers.reduce((s, w) => s + w.cuts, 0)}, resumes ${watchers.reduce((s, w) => s + w.resumes, 0)}, 410 relists ${watchers.reduce((s, w) => s + w.expired, 0)}, ` +
    `apiserver killed -9: ${killed || 'no (several apiservers: T7)'}; unacknowledged writes ${writeFailures}; converged ${final ? 'yes' : 'NO'}`);
  for (const [i, v] of vs.entries()) {
    for (const [k, xs] of Object.entries(v)) if ((xs as string[]).length) console.log(`watcher ${i} ${k}: ${(xs as string[]).slice(0, 10).join(', ')}`);
  }
  assert.equal(missing, 0, 'missing events');
  assert.equal(duplicate, 0, 'duplicate events');
  assert.equal(ooo, 0, 'out-of-order events');
  assert.equal(wrong, 0, 'relists with a state other than the acknowledged one');
  assert.ok(final, 'every watcher converged on the server state');
  } finally {
    stopWriters = true; stopWatch.abort();
    await Promise.all([...writing, ...watching]);
  }
});
