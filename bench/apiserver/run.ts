/**
 * bench/apiserver: what the apiserver costs over raw etcd, measured in one run on one etcd cluster.
 *  - creates/s through the apiserver ÷ raw etcd txn creates/s (64 in flight)      goal ≥ 0.8
 *  - create latency p50 through the apiserver − raw etcd p50                      goal ≤ +2 ms
 *    (printed twice: one create at a time, which the goal applies to, and at 64 in flight, where
 *    Little's law makes p50 ≈ 64 ÷ creates/s and so repeats the throughput figure)
 *  - LIST of 10,000 pods through the apiserver ÷ raw etcd range of the same keys   goal ≤ 1×
 *  - watch delivery p99 with 100 watchers ÷ raw etcd watch with 100 watchers       goal ≤ 2×
 *
 * The apiserver runs in its own process (as etcd does for the raw floor), started from source with
 * tsx; BENCH_INPROC=1 runs it inside the bench process instead, BENCH_CPU_PROF=DIR writes a
 * `node --cpu-prof` profile of the apiserver process to DIR, BENCH_ONLY=crd runs only the custom-resource
 * phase (crd.ts: custom object creates/s ÷ ConfigMap creates/s, goal ≥ 0.9), BENCH_APISERVER_MAIN=FILE runs another
 * checkout's apiserver/src/main.ts (A/B), BENCH_ONLY=creates skips LIST and watch. A second server's creates follow ours in
 * every round: skeleton.ts, the stack's own floor, by default; BENCH_AB_MAIN=FILE another main.ts (an
 * A/B of CPU per create); BENCH_AB_MAIN=none none.
 */
import { setMaxListeners } from 'node:events';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import { Pool, request } from 'undici';
import { startEtcdCluster, startTestApiServer } from '@mk8s/apiserver/testing';
import { fmt, printHeader, printRow, runConcurrent, summarize } from '../lib.js';
import { benchCustomResources } from './crd.js';

const CREATES = Number(process.env['BENCH_CREATES'] ?? 6000);
const IN_FLIGHT = 64;
const LIST_SIZE = Number(process.env['BENCH_LIST'] ?? 10_000);
const WATCHERS = 100;
const WATCH_EVENTS = Number(process.env['BENCH_WATCH_EVENTS'] ?? 200);
const SINGLE_CREATES = Number(process.env['BENCH_SINGLE_CREATES'] ?? 300);
const ROUNDS = 6;
// Creates on each side before the measured rounds (performance-anchors §9: keep warm-up separate):
// a fresh process spends its first thousands of requests in V8's tiers and growing its heap.
const WARMUP = Number(process.env['BENCH_WARMUP'] ?? 6000);
// BENCH_ONLY=creates: only the create rounds (a profile of the create path, a quicker A/B).
const ONLY_CREATES = process.env['BENCH_ONLY'] === 'creates';
const ONLY_CRD = process.env['BENCH_ONLY'] === 'crd';
const CRD_CREATES = Number(process.env['BENCH_CRD_CREATES'] ?? 3000);

const podBody = (ns: string, name: string) => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: ns, labels: { app: 'bench' } },
  spec: { containers: [{ name: 'c', image: 'mk8s/pause:3.9' }] },
});

async function main(): Promise<void> {
  const etcd = await startEtcdCluster({ members: 3 });
  const api: { url: string; pid?: number | undefined; stop(): Promise<void> } = process.env['BENCH_INPROC']
    ? await startTestApiServer({ etcdEndpoints: etcd.endpoints }) : await spawnApiServer(etcd.endpoints);
  const load0 = loadavg()[0]!;
  // The same receive limit as the apiserver's client (a 10,000-pod range is over gRPC's 4 MiB default).
  const raw = new Etcd3({ hosts: etcd.endpoints, grpcOptions: { 'grpc.max_receive_message_length': 2 ** 31 - 1 } });
  const pool = new Pool(api.url, { connections: IN_FLIGHT, pipelining: 1 });
  // A second server on the same etcd whose creates run in every round right after ours. By default
  // skeleton.ts, the stack's own floor (node:http + one grpc-js txn + the watch feed, nothing else):
  // what any apiserver here could reach. BENCH_AB_MAIN=FILE: another checkout's main.ts instead (an
  // A/B of CPU per create under the same conditions); BENCH_AB_MAIN=none: no second server.
  const skeleton = fileURLToPath(new URL('./skeleton.ts', import.meta.url));
  const abEnv = process.env['BENCH_AB_MAIN'] ?? skeleton;
  const abMain = abEnv === 'none' || process.env['BENCH_INPROC'] ? undefined : abEnv;
  const abName = abMain === skeleton ? 'the stack\'s floor (skeleton.ts)' : `BENCH_AB_MAIN`;
  const apiB = abMain ? await spawnApiServer(etcd.endpoints, abMain) : undefined;
  const poolB = apiB ? new Pool(apiB.url, { connections: IN_FLIGHT, pipelining: 1 }) : undefined;
  const post = async (path: string, body: unknown, via = pool) => {
    const res = await via.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`POST ${path}: ${res.statusCode} ${text}`);
    return text;
  };
  const get = async (path: string) => { const res = await pool.request({ method: 'GET', path }); return { status: res.statusCode, body: await res.body.text() }; };
  const crdPhase = () => benchCustomResources((p, b) => post(p, b), get, { creates: CRD_CREATES, inFlight: IN_FLIGHT, rounds: ROUNDS, warmup: Math.min(WARMUP, 2000) });
  try {
    if (ONLY_CRD) {
      printHeader(`bench/apiserver, custom resources (${CRD_CREATES} creates each, ${IN_FLIGHT} in flight, alternating in ${ROUNDS} rounds; load average ${fmt(load0, 1)})`);
      await crdPhase();
      return;
    }
    for (const ns of ['bench-warmup', 'bench-create', 'bench-list', 'bench-watch']) await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

    // 1+2. Creates: raw etcd txn (create-if-absent, as the apiserver does) vs POST through the apiserver.
    // The raw floor writes what the apiserver stores for the same pod (defaults, uid, timestamps):
    // the value size drives etcd's and gRPC's cost, so a bare body would flatter the floor.
    await post('/api/v1/namespaces/bench-list/pods', podBody('bench-list', 'sample'));
    const payload = (await raw.get('/registry/pods/bench-list/sample').buffer())!;
    await raw.delete().key('/registry/pods/bench-list/sample');
    const etcdPids = childPids('etcd');
    // Raw and apiserver phases alternate in ROUNDS slices (order flipped every round), so a load
    // change on this shared machine hits both sides alike instead of one whole phase.
    const rawCreate = { latMs: [] as number[], elapsedMs: 0 };
    const apiCreate = { latMs: [] as number[], elapsedMs: 0 };
    const rawSingle = { latMs: [] as number[] };
    const apiSingle = { latMs: [] as number[] };
    const cpuRaw = { self: 0, etcd: 0, api: 0 };
    const cpuApi = { self: 0, etcd: 0, api: 0 };
    const add = (to: typeof cpuRaw, a: typeof cpuRaw, b: typeof cpuRaw) => { to.self += b.self - a.self; to.etcd += b.etcd - a.etcd; to.api += b.api - a.api; };
    await runConcurrent(WARMUP, IN_FLIGHT, async (i) => {
      const key = `/bench/raw/warmup/p-${i}`;
      await raw.if(key, 'Create', '==', 0).then(raw.put(key).value(payload)).commit();
    });
    await runConcurrent(WARMUP, IN_FLIGHT, async (i) => { await post('/api/v1/namespaces/bench-warmup/pods', podBody('bench-warmup', `p-${i}`)); });
    if (poolB) await runConcurrent(WARMUP, IN_FLIGHT, async (i) => { await post('/api/v1/namespaces/bench-warmup/pods', podBody('bench-warmup', `b-${i}`), poolB); });
    const abCreate = { elapsedMs: 0, cpu: { self: 0, etcd: 0, api: 0 } };
    const slice = Math.ceil(CREATES / ROUNDS);
    const singleSlice = Math.ceil(SINGLE_CREATES / ROUNDS);
    for (let round = 0; round < ROUNDS; round++) {
      const base = round * slice;
      const n = Math.min(slice, CREATES - base);
      const rawPhase = async () => {
        const c0 = cpuSnapshot(etcdPids, api.pid);
        const r = await runConcurrent(n, IN_FLIGHT, async (i) => {
          const key = `/bench/raw/pods/p-${base + i}`;
          await raw.if(key, 'Create', '==', 0).then(raw.put(key).value(payload)).commit();
        });
        add(cpuRaw, c0, cpuSnapshot(etcdPids, api.pid));
        rawCreate.latMs.push(...r.latMs); rawCreate.elapsedMs += r.elapsedMs;
        // One create at a time (upstream's API-call latency SLO measures single calls): the latency
        // a request pays, without queueing behind 63 others.
        const one = await runConcurrent(singleSlice, 1, async (i) => {
          const key = `/bench/raw/single/p-${round * singleSlice + i}`;
          await raw.if(key, 'Create', '==', 0).then(raw.put(key).value(payload)).commit();
        });
        rawSingle.latMs.push(...one.latMs);
      };
      const apiPhase = async () => {
        const c0 = cpuSnapshot(etcdPids, api.pid);
        const r = await runConcurrent(n, IN_FLIGHT, async (i) => { await post('/api/v1/namespaces/bench-create/pods', podBody('bench-create', `p-${base + i}`)); });
        add(cpuApi, c0, cpuSnapshot(etcdPids, api.pid));
        apiCreate.latMs.push(...r.latMs); apiCreate.elapsedMs += r.elapsedMs;
        const one = await runConcurrent(singleSlice, 1, async (i) => { await post('/api/v1/namespaces/bench-create/pods', podBody('bench-create', `s-${round * singleSlice + i}`)); });
        apiSingle.latMs.push(...one.latMs);
      };
      if (round % 2 === 0) { await rawPhase(); await apiPhase(); } else { await apiPhase(); await rawPhase(); }
      if (apiB && poolB) {
        const c0 = cpuSnapshot(etcdPids, apiB.pid);
        const r = await runConcurrent(n, IN_FLIGHT, async (i) => { await post('/api/v1/namespaces/bench-create/pods', podBody('bench-create', `b-${base + i}`), poolB); });
        add(abCreate.cpu, c0, cpuSnapshot(etcdPids, apiB.pid));
        abCreate.elapsedMs += r.elapsedMs;
      }
    }
    const rawRate = CREATES / (rawCreate.elapsedMs / 1000);
    const apiRate = CREATES / (apiCreate.elapsedMs / 1000);
    const rawLat = summarize(rawCreate.latMs);
    const apiLat = summarize(apiCreate.latMs);
    const rawOne = summarize(rawSingle.latMs);
    const apiOne = summarize(apiSingle.latMs);
    const printCreates = (load0: number) => {
      const load1 = loadavg()[0]!;
      printHeader(`bench/apiserver (${CREATES} creates, ${IN_FLIGHT} in flight, raw and apiserver alternating in ${ROUNDS} rounds; `
        + (ONLY_CREATES ? 'creates only; ' : `LIST ${LIST_SIZE}; ${WATCHERS} watchers × ${WATCH_EVENTS} events; `)
        + `apiserver ${process.env['BENCH_INPROC'] ? 'in the bench process' : 'in its own process'}; load average ${fmt(load0, 1)} → ${fmt(load1, 1)})`);
      printRow('creates/s (64 in flight)', fmt(apiRate, 0), fmt(rawRate, 0), fmt(apiRate / rawRate), '≥ 0.8');
      printRow('create latency p50, 1 in flight (ms)', fmt(apiOne.p50), fmt(rawOne.p50), `${delta(apiOne.p50 - rawOne.p50)}ms`, '≤ +2 ms');
      printRow('create latency p99, 1 in flight (ms)', fmt(apiOne.p99), fmt(rawOne.p99), fmt(apiOne.p99 / rawOne.p99), '(reported)');
      printRow('create latency p50, 64 in flight (ms)', fmt(apiLat.p50), fmt(rawLat.p50), `${delta(apiLat.p50 - rawLat.p50)}ms`, '(reported: 64 ÷ creates/s)');
      printRow('create latency p99, 64 in flight (ms)', fmt(apiLat.p99), fmt(rawLat.p99), fmt(apiLat.p99 / rawLat.p99), '(reported)');
      // CPU time per create (ms), by process: what each layer costs, much less sensitive to load than wall time.
      const per = (ms: number) => fmt(ms / CREATES, 3);
      if (api.pid !== undefined) printRow('  CPU/create: apiserver process (ms)', per(cpuApi.api), '-', '', '(diagnostic)');
      printRow('  CPU/create: bench client (ms)', per(cpuApi.self), per(cpuRaw.self), '', '(diagnostic)');
      printRow('  CPU/create: 3 etcd members (ms)', per(cpuApi.etcd), per(cpuRaw.etcd), '', '(diagnostic)');
      if (abMain) {
        const abRate = CREATES / (abCreate.elapsedMs / 1000);
        console.log(`${abName}${abMain === skeleton ? '' : `=${abMain}`}, its creates right after ours in every round:`);
        const what = abMain === skeleton ? '(floor: the most any apiserver here reaches)' : '(A/B)';
        printRow('  creates/s', fmt(abRate, 0), fmt(rawRate, 0), fmt(abRate / rawRate), what);
        printRow('  CPU/create: its process (ms)', per(abCreate.cpu.api), '-', '', '(diagnostic)');
        printRow('  CPU/create: 3 etcd members (ms)', per(abCreate.cpu.etcd), per(cpuRaw.etcd), '', '(diagnostic)');
      }
    };

    if (ONLY_CREATES) {
      printCreates(load0);
      return;
    }

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
    setMaxListeners(0, ac.signal);                                   // one listener per watcher
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

    printCreates(load0);
    printRow(`LIST ${LIST_SIZE} pods (ms, p50 of 5)`, fmt(listMs), fmt(rangeMs), fmt(listMs / rangeMs), '≤ 1×');
    printRow('watch delivery p99 (ms)', fmt(apiWatch.p99), fmt(rawWatch.p99), fmt(apiWatch.p99 / rawWatch.p99), '≤ 2×');
    await crdPhase();
  } finally {
    await pool.close();
    await poolB?.close();
    raw.close();
    await apiB?.stop();
    await api.stop();
    await etcd.stop();
  }
}

/** pids of this process' children whose command is comm. */
function childPids(comm: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
      if (name === comm && ppid === process.pid) out.push(Number(d));
    } catch { /* gone */ }
  }
  return out;
}

/** user+system CPU ms of a process (0 when it is gone). */
function procCpuMs(pid: number): number {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;                      // utime + stime, in 100 Hz ticks
  } catch {
    return 0;
  }
}

function cpuSnapshot(etcdPids: number[], apiPid: number | undefined): { self: number; etcd: number; api: number } {
  const u = process.cpuUsage();
  return { self: (u.user + u.system) / 1000, etcd: etcdPids.reduce((s, p) => s + procCpuMs(p), 0), api: apiPid === undefined ? 0 : procCpuMs(apiPid) };
}

const delta = (ms: number) => `${ms >= 0 ? '+' : ''}${fmt(ms)}`;

/** The apiserver binary in its own process, from source, on a free port; stop() ends it with SIGTERM (profile written). */
async function spawnApiServer(etcdEndpoints: string[], mainFile?: string): Promise<{ url: string; pid: number | undefined; stop(): Promise<void> }> {
  const port = await freePort();
  // BENCH_APISERVER_MAIN: another checkout's apiserver/src/main.ts (an A/B against older code).
  const main = mainFile ?? process.env['BENCH_APISERVER_MAIN'] ?? fileURLToPath(new URL('../../apiserver/src/main.ts', import.meta.url));
  const prof = process.env['BENCH_CPU_PROF'];
  // BENCH_APISERVER_NODE_FLAGS: extra node flags for the apiserver process (e.g. V8 heap sizing).
  const nodeFlags = (process.env['BENCH_APISERVER_NODE_FLAGS'] ?? '').split(' ').filter(Boolean);
  const args = ['--conditions=@mk8s/source', '--import', 'tsx', ...nodeFlags, ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), main,
    `--etcd-servers=${etcdEndpoints.join(',')}`, `--port=${port}`, '--log-level=warn', '--etcd-compaction-interval=0'];
  const proc: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const killOnExit = () => proc.kill('SIGKILL');
  process.once('exit', killOnExit);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`apiserver exited with ${proc.exitCode}`);
    try { if ((await request(`${url}/readyz`)).statusCode === 200) break; } catch { /* not listening yet */ }
    if (Date.now() > deadline) { proc.kill('SIGKILL'); throw new Error('apiserver did not become ready'); }
    await new Promise((r) => setTimeout(r, 100));                       // polling a real process
  }
  return {
    url,
    pid: proc.pid,
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
      process.off('exit', killOnExit);
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address() as AddressInfo; s.close(() => resolve(port)); });
  });
}

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for watch events');
    await new Promise((r) => setTimeout(r, 20));
  }
}

main().catch((err: unknown) => { console.error(err); process.exit(1); });
