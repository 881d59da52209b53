/**
 * etcd faults (issue 21): T4 the etcd leader killed -9 under writes (0 acknowledged writes lost,
 * the write stall, the member rejoining under its supervisor) and T5 quorum loss (2 of 3 members
 * SIGSTOPped: reads and writes fail fast with a 5xx Status; no pod deleted, no node marked
 * NotReady or tainted because of the outage; recovery once one member returns).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, ConfigMaps, Namespaces, Nodes, Pods, type KubeObject, type WatchEvent } from '@mk8s/api';
import { adminClient, etcdMembers, figure, mkctl, mkctlAsync, supervised, uniqueName, waitFor } from './lib/chaos.js';

type Cm = KubeObject & { data?: Record<string, string> };
const ns = uniqueName('chaos-etcd');
const client = adminClient('chaos-etcd');
const cms = () => client.resource<Cm>(ConfigMaps, ns);

before(async () => { await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }); });
after(async () => { await client.resource(Namespaces).delete(ns).catch(() => undefined); });

/** Writers creating ConfigMaps until stopped: acknowledged names, failures, the longest gap between acknowledgements. */
function startWriters(prefix: string, n = 2) {
  const acked: string[] = [];
  let failed = 0, stop = false, lastAck = Date.now(), maxGapMs = 0;
  const done = Promise.all(Array.from({ length: n }, async (_, w) => {
    for (let i = 0; !stop; i++) {
      const name = `${prefix}-${w}-${i}`;
      try {
        await cms().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { i: String(i) } }, { signal: AbortSignal.timeout(30_000) });
        acked.push(name);
        const now = Date.now(); maxGapMs = Math.max(maxGapMs, now - lastAck); lastAck = now;
      } catch { failed++; await new Promise((r) => setTimeout(r, 100)); }
    }
  }));
  return { acked, failed: () => failed, maxGapS: () => Math.max(maxGapMs, Date.now() - lastAck) / 1000, stop: async () => { stop = true; await done; } };
}

test('T4: the etcd leader killed -9 under writes loses no acknowledged write and rejoins', { timeout: 300_000 }, async () => {
  const w = startWriters('l');
  try {
  await waitFor(() => w.acked.length >= 30, { timeoutMs: 60_000, what: 'writes before the fault' });
  const { leader } = etcdMembers();
  assert.ok(leader, 'etcd has a leader');
  const pidBefore = supervised()[leader]?.pid;
  const restartsBefore = supervised()[leader]?.restarts ?? 0;
  // In the background: a spawnSync would block this process, writers included, for the whole --watch.
  const chaos = await mkctlAsync(['chaos', 'kill', 'etcd-leader', '--watch', '--timeout', '150']).done;
  const afterFault = w.acked.length;
  await waitFor(() => w.acked.length >= afterFault + 30, { timeoutMs: 60_000, what: 'writes after the fault' });
  const stall = w.maxGapS();
  await w.stop();
  assert.equal(chaos.code, 0, chaos.out);
  assert.match(chaos.out, new RegExp(`sent SIGKILL to ${leader}`));
  const rejoined = await waitFor(() => etcdMembers().reachable.includes(leader) && supervised()[leader]?.pid !== pidBefore && supervised()[leader]?.state === 'running',
    { timeoutMs: 90_000, what: `${leader} back and reachable` }).then(() => true, () => false);
  const stored = new Set((await cms().list()).items.map((c) => c.metadata.name));
  const lost = w.acked.filter((n) => !stored.has(n));
  const newLeader = etcdMembers().leader;
  figure('T4', 'etcd leader kill -9: acknowledged writes lost', `${lost.length} of ${w.acked.length}`, '0',
    `longest write stall ${stall.toFixed(2)}s; failed (uncertain) writes ${w.failed()}; ${leader} restarted by the supervisor ${(supervised()[leader]?.restarts ?? 0) - restartsBefore}x and rejoined: ${rejoined ? 'yes' : 'NO'} (goal yes); leader now ${newLeader ?? 'none'}`);
  assert.deepEqual(lost, []);
  assert.ok(rejoined, `${leader} rejoined`);
  } finally { await w.stop(); }
});

let seq = 0;
interface Probe { what: string; code: number | 'ok' | string; ms: number; status: boolean; endedAt: number }

/** One request during the outage: its answer (a Status code, 'ok', or a transport error) and how long it took. */
async function probe(what: string, f: (signal: AbortSignal) => Promise<unknown>, capMs: number): Promise<Probe> {
  const t0 = Date.now();
  try {
    await f(AbortSignal.timeout(capMs));
    return { what, code: 'ok', ms: Date.now() - t0, status: false, endedAt: Date.now() };
  } catch (err) {
    const ms = Date.now() - t0;
    if (err instanceof ApiError) return { what, code: err.code, ms, status: true, endedAt: Date.now() };
    return { what, code: String((err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError' ? 'HANG' : (err as Error).message).slice(0, 80), ms, status: false, endedAt: Date.now() };
  }
}

test('T5: quorum loss (2 of 3 etcd members stopped) fails fast with 5xx, deletes and evicts nothing, recovers', { timeout: 480_000 }, async () => {
  // The apiserver's own request timeout is 60 s (upstream --request-timeout); a request must be
  // answered before it. The probe gives up at 75 s: anything slower is a hang.
  const REQUEST_TIMEOUT_MS = 60_000, CAP_MS = 75_000;
  const FIRST_BACK_S = 45, SECOND_BACK_S = 75;
  const podUids = async () => new Map((await client.resource(Pods).list()).items.map((p) => [p.metadata.uid!, `${p.metadata.namespace}/${p.metadata.name}`]));
  const before = await podUids();
  const nodes = (await client.resource(Nodes).list()).items.map((n) => n.metadata.name);
  await cms().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe', namespace: ns }, data: {} });

  // Every change of every node's Ready condition and taints, from before the fault to well after.
  const nodeEvents: string[] = [];
  const watchStop = new AbortController();
  const nodeWatch = (async () => {
    let rv = (await client.resource(Nodes).list()).metadata.resourceVersion ?? '';
    while (!watchStop.signal.aborted) {
      try {
        for await (const ev of client.resource(Nodes).watch({ resourceVersion: rv, allowWatchBookmarks: true, signal: watchStop.signal }) as AsyncIterable<WatchEvent<KubeObject & { spec?: { taints?: { key: string }[] }; status?: { conditions?: { type: string; status: string }[] } }>>) {
          rv = ev.object.metadata.resourceVersion ?? rv;
          if (ev.type === 'BOOKMARK') continue;
          const ready = ev.object.status?.conditions?.find((c) => c.type === 'Ready')?.status;
          const taints = (ev.object.spec?.taints ?? []).map((t) => t.key).filter((k) => k.startsWith('node.kubernetes.io/'));
          if (ready !== 'True' || taints.length) nodeEvents.push(`${ev.object.metadata.name} Ready=${ready} taints=${taints.join(',')}`);
        }
      } catch {
        rv = (await client.resource(Nodes).list().catch(() => ({ metadata: { resourceVersion: rv } }))).metadata.resourceVersion ?? rv;
      }
      if (!watchStop.signal.aborted) await new Promise((r) => setTimeout(r, 500));
    }
  })();

  let first: ReturnType<typeof mkctlAsync> | undefined, second: ReturnType<typeof mkctlAsync> | undefined;
  try {
  const members = etcdMembers();
  assert.equal(members.reachable.length, 3, 'three etcd members before the fault');
  // Stop the leader and one follower: the one left can elect no one.
  const victims = [members.leader!, members.reachable.find((m) => m !== members.leader)!];
  const restartsBefore = Object.fromEntries(victims.map((v) => [v, supervised()[v]?.restarts ?? 0]));
  first = mkctlAsync(['chaos', 'stop', victims[0]!, '--seconds', String(FIRST_BACK_S)]);
  second = mkctlAsync(['chaos', 'stop', victims[1]!, '--seconds', String(SECOND_BACK_S)]);
  let tStop = Date.now();
  // The first member's SIGCONT comes FIRST_BACK_S after its own SIGSTOP: the outage window ends then,
  // however late the second stop came.
  let tFirst = 0;
  await waitFor(() => {
    if (!tFirst && first!.output().includes('SIGSTOP')) tFirst = Date.now();
    return tFirst > 0 && second!.output().includes('SIGSTOP');
  }, { timeoutMs: 90_000, intervalMs: 100, what: 'both members stopped' })
    .catch((err: unknown) => { throw new Error(`${String(err)}\n${first!.output()}\n${second!.output()}`); });
  tStop = Date.now();
  const firstBackAt = tFirst + FIRST_BACK_S * 1000;

  // Probes while quorum is lost: a write, a get, a consistent list, a list from the cache (may answer).
  const probes: Probe[] = [];
  while (Date.now() < firstBackAt - 15_000) {
    const batch = await Promise.all([
      probe('create', (signal) => cms().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `q-${seq++}`, namespace: ns }, data: {} }, { signal }), CAP_MS),
      probe('update', async (signal) => { await cms().patch('probe', 'merge', { data: { t: String(Date.now()) } }, { signal }); }, CAP_MS),
      probe('get', (signal) => cms().get('probe', { signal }), CAP_MS),
      probe('list', (signal) => client.resource(Pods).list({ signal }), CAP_MS),
    ]);
    probes.push(...batch);
  }
  const outage = probes.filter((p) => p.code !== 'ok');
  const answered = probes.filter((p) => p.code === 'ok');
  const not5xx = outage.filter((p) => !(typeof p.code === 'number' && p.code >= 500));
  const slow = outage.filter((p) => p.ms > REQUEST_TIMEOUT_MS);
  const slowest = Math.max(0, ...outage.map((p) => p.ms));
  // A write the client retried (Retry-After) until the first member was back is no write without
  // quorum: only those answered before the SIGCONT (FIRST_BACK_S after the stop) count.
  const writesOk = answered.filter((p) => (p.what === 'create' || p.what === 'update') && p.endedAt < firstBackAt - 1000);

  // One member back: quorum (2 of 3) again.
  const r1 = await first.done;
  assert.equal(r1.code, 0, r1.out);
  const tBack = Date.now();
  await waitFor(async () => (await probe('create', (signal) => cms().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `r-${seq++}`, namespace: ns }, data: {} }, { signal }), 15_000)).code === 'ok',
    { timeoutMs: 120_000, intervalMs: 500, what: 'a write succeeding with one member back' });
  const recoverS = (Date.now() - tBack) / 1000;
  const r2 = await second.done;
  assert.equal(r2.code, 0, r2.out);
  await waitFor(() => etcdMembers().reachable.length === 3, { timeoutMs: 90_000, what: 'all three members reachable' });

  // Long enough after recovery for the node lifecycle controller to act on a stale view: the
  // grace period (50 s) from the stop, plus monitor passes.
  await waitFor(() => Date.now() - tStop > (SECOND_BACK_S + 60) * 1000, { timeoutMs: 200_000, intervalMs: 1000 });
  watchStop.abort();
  await nodeWatch;
  const afterUids = await podUids();
  const deleted = [...before].filter(([uid]) => !afterUids.has(uid)).map(([, n]) => n);
  const restarted = victims.filter((v) => (supervised()[v]?.restarts ?? 0) !== restartsBefore[v]);
  const codes = [...new Set(outage.map((p) => `${p.what}:${p.code}`))].sort().join(' ');

  figure('T5', 'quorum loss: requests answered with a 5xx Status', `${outage.length - not5xx.length} of ${outage.length}`, 'all',
    `slowest failure ${(slowest / 1000).toFixed(1)}s (goal < ${REQUEST_TIMEOUT_MS / 1000}s, the request timeout); answers ${codes}; served during the outage ${answered.map((p) => p.what).join(',') || 'none'}`);
  figure('T5', 'quorum loss: spurious pod deletions', deleted.length, '0', `nodes NotReady/tainted during and after ${nodeEvents.length} (goal 0) of ${nodes.length} nodes; write back ${recoverS.toFixed(1)}s after one member returned`);
  for (const e of nodeEvents.slice(0, 20)) console.log(`node change: ${e}`);
  for (const p of [...not5xx, ...slow].slice(0, 20)) console.log(`probe: ${p.what} ${p.code} in ${p.ms}ms`);
  assert.ok(outage.length > 0, 'requests failed during the outage');
  assert.deepEqual(writesOk.map((p) => p.what), [], 'no write succeeds without quorum');
  assert.deepEqual(not5xx.map((p) => `${p.what} ${p.code}`), [], 'every failure is a 5xx Status');
  assert.deepEqual(slow.map((p) => `${p.what} ${p.ms}ms`), [], 'no request hangs past the request timeout');
  assert.deepEqual(deleted, [], 'no pod deleted');
  assert.deepEqual(nodeEvents, [], 'no node NotReady or tainted');
  assert.deepEqual(restarted, [], 'the stopped members were continued, not restarted');
  } finally {
    // Whatever failed, the stopped members are continued (mkctl chaos stop sends SIGCONT at its time).
    watchStop.abort();
    await Promise.all([first?.done, second?.done, nodeWatch]);
  }
});
