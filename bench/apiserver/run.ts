/**
 * bench/apiserver: what the apiserver costs over raw etcd, measured in one run on one etcd cluster.
 *  - creates/s through the apiserver ÷ raw etcd txn creates/s (64 in flight)      goal ≥ 0.8
 *  - create latency p50 through the apiserver − raw etcd p50                      goal ≤ +2 ms
 *  - LIST of 10,000 pods through the apiserver ÷ raw etcd range of the same keys   goal ≤ 1×
 *  - watch delivery p99 with 100 watchers ÷ raw etcd watch with 100 watchers       goal ≤ 2×
 */
import { Etcd3 } from 'etcd3';
import { Pool, request } from 'undici';
import { startEtcdCluster, startTestApiServer } from '@mk8s/apiserver/testing';
import { fmt, printHeader, printRow, runConcurrent, summarize } from '../lib.js';

const CREATES = Number(process.env['BENCH_CREATES'] ?? 3000);
const IN_FLIGHT = 64;
const LIST_SIZE = Number(process.env['BENCH_LIST'] ?? 10_000);
const WATCHERS = 100;
const WATCH_EVENTS = Number(process.env['BENCH_WATCH_EVENTS'] ?? 200);

const podBody = (ns: string, name: string) => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: ns, labels: { app: 'bench' } },
  spec: { containers: [{ name: 'c', image: 'mk8s/pause:3.9' }] },
});

async function main(): Promise<void> {
  const etcd = await startEtcdCluster({ members: 3 });
  const api = await startTestApiServer({ etcdEndpoints: etcd.endpoints });
  // The same receive limit as the apiserver's client (a 10,000-pod range is over gRPC's 4 MiB default).
  const raw = new Etcd3({ hosts: etcd.endpoints, grpcOptions: { 'grpc.max_receive_message_length': 2 ** 31 - 1 } });
  const pool = new Pool(api.url, { connections: IN_FLIGHT, pipelining: 1 });
  const post = async (path: string, body: unknown) => {
    const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`POST ${path}: ${res.statusCode} ${text}`);
    return text;
  };
  try {
    for (const ns of ['bench-create', 'bench-list', 'bench-watch']) await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

    // 1+2. Creates: raw etcd txn (create-if-absent, as the apiserver does) vs POST through the apiserver.
    const payload = JSON.stringify({ ...podBody('raw', 'x'), metadata: { ...podBody('raw', 'x').metadata, uid: crypto.randomUUID(), creationTimestamp: new Date().toISOString() } });
    const rawCreate = await runConcurrent(CREATES, IN_FLIGHT, async (i) => {
      const key = `/bench/raw/pods/p-${i}`;
      await raw.if(key, 'Create', '==', 0).then(raw.put(key).value(payload)).commit();
    });
    const apiCreate = await runConcurrent(CREATES, IN_FLIGHT, async (i) => { await post('/api/v1/namespaces/bench-create/pods', podBody('bench-create', `p-${i}`)); });
    const rawRate = CREATES / (rawCreate.elapsedMs / 1000);
    const apiRate = CREATES / (apiCreate.elapsedMs / 1000);
    const rawLat = summarize(rawCreate.latMs);
    const apiLat = summarize(apiCreate.latMs);

    // 3. LIST of LIST_SIZE pods: write them through the apiserver, then time a full list vs a raw range.
    await runConcurrent(LIST_SIZE, IN_FLIGHT, async (i) => { await post('/api/v1/namespaces/bench-list/pods', podBody('bench-list', `l-${i}`)); });
    const listTimes: number[] = [];
    const rangeTimes: number[] = [];
    for (let r = 0; r < 5; r++) {
      let t = performance.now();
      const res = await request(`${api.url}/api/v1/namespaces/bench-list/pods`);
      const list = (await res.body.json()) as { items: unknown[] };
      if (!list.items) throw new Error(`list failed: ${res.statusCode} ${JSON.stringify(list).slice(0, 300)}`);
      listTimes.push(performance.now() - t);
      if (list.items.length !== LIST_SIZE) throw new Error(`list returned ${list.items.length} items`);
      t = performance.now();
      const kvs = await raw.getAll().prefix('/registry/pods/bench-list/').strings();
      Object.values(kvs).forEach((v) => JSON.parse(v));
      rangeTimes.push(performance.now() - t);
    }
    const listMs = summarize(listTimes).p50;
    const rangeMs = summarize(rangeTimes).p50;

    // 4. Watch delivery with WATCHERS watchers: time from write start to each watcher's receipt.
    const sentAt = new Map<string, number>();
    const apiDelays: number[] = [];
    const ac = new AbortController();
    const rv = ((await (await request(`${api.url}/api/v1/namespaces/bench-watch/configmaps`)).body.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    let apiSeen = 0;
    const apiWatchers = await Promise.all(Array.from({ length: WATCHERS }, async () => {
      const res = await request(`${api.url}/api/v1/namespaces/bench-watch/configmaps?watch=true&resourceVersion=${rv}`, { signal: ac.signal });
      let buf = '';
      res.body.on('data', (d: Buffer) => {
        const now = performance.now();
        buf += d.toString();
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line) as { type: string; object: { metadata: { name: string } } };
          const at = sentAt.get(ev.object.metadata.name);
          if (ev.type === 'ADDED' && at !== undefined) { apiDelays.push(now - at); apiSeen++; }
        }
      });
      res.body.on('error', () => {});
      return res;
    }));
    for (let i = 0; i < WATCH_EVENTS; i++) {
      const name = `w-${i}`;
      sentAt.set(name, performance.now());
      await post('/api/v1/namespaces/bench-watch/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { i: String(i) } });
    }
    await waitUntil(() => apiSeen >= WATCHERS * WATCH_EVENTS, 30_000);
    ac.abort();
    void apiWatchers;

    const rawDelays: number[] = [];
    const rawSent = new Map<string, number>();
    let rawSeen = 0;
    const rawWatchers = await Promise.all(Array.from({ length: WATCHERS }, async () => {
      const w = await raw.watch().prefix('/bench/rawwatch/').create();
      w.on('put', (kv) => {
        const at = rawSent.get(kv.key.toString());
        if (at !== undefined) { rawDelays.push(performance.now() - at); rawSeen++; }
      });
      return w;
    }));
    for (let i = 0; i < WATCH_EVENTS; i++) {
      const key = `/bench/rawwatch/w-${i}`;
      rawSent.set(key, performance.now());
      await raw.if(key, 'Create', '==', 0).then(raw.put(key).value(payload)).commit();
    }
    await waitUntil(() => rawSeen >= WATCHERS * WATCH_EVENTS, 30_000);
    await Promise.all(rawWatchers.map((w) => w.cancel()));
    const apiWatch = summarize(apiDelays);
    const rawWatch = summarize(rawDelays);

    printHeader(`bench/apiserver (${CREATES} creates, ${IN_FLIGHT} in flight; LIST ${LIST_SIZE}; ${WATCHERS} watchers × ${WATCH_EVENTS} events)`);
    printRow('creates/s', fmt(apiRate, 0), fmt(rawRate, 0), fmt(apiRate / rawRate), '≥ 0.8');
    printRow('create latency p50 (ms)', fmt(apiLat.p50), fmt(rawLat.p50), `+${fmt(apiLat.p50 - rawLat.p50)}ms`, '≤ +2 ms');
    printRow('create latency p99 (ms)', fmt(apiLat.p99), fmt(rawLat.p99), fmt(apiLat.p99 / rawLat.p99), '(reported)');
    printRow(`LIST ${LIST_SIZE} pods (ms, p50 of 5)`, fmt(listMs), fmt(rangeMs), fmt(listMs / rangeMs), '≤ 1×');
    printRow('watch delivery p99 (ms)', fmt(apiWatch.p99), fmt(rawWatch.p99), fmt(apiWatch.p99 / rawWatch.p99), '≤ 2×');
  } finally {
    await pool.close();
    raw.close();
    await api.stop();
    await etcd.stop();
  }
}

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for watch events');
    await new Promise((r) => setTimeout(r, 20));
  }
}

main().catch((err: unknown) => { console.error(err); process.exit(1); });
