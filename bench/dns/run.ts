/**
 * bench/dns: cluster-dns as a ratio to the raw floor in the same run, on 127.0.0.1:
 *  1. queries/s and latency p50/p99 for a mix of A (60%), SRV (20%) and NXDOMAIN (20%) questions
 *     about 1,000 Services (each with an EndpointSlice of 10 endpoints: 10,000 endpoints), 64 in
 *     flight over 4 UDP sockets (and latency one query at a time), ÷ a trivial UDP responder (echoes the query with the QR bit set:
 *     no parsing, no lookup): the floor of a Node.js UDP server on this machine. Server and floor
 *     each run in a process of their own; rounds alternate which goes first; medians printed;
 *  2. memory: heap held by the informer caches (fake informers holding the same objects real ones
 *     would) plus the record store for those 1,000 Services / 10,000 endpoints, after GC.
 * Run: node --conditions=@mk8s/source --import tsx bench/dns/run.ts
 * Env: BENCH_SECONDS (4 a round), BENCH_ROUNDS (3), BENCH_SERVICES (1000), BENCH_ENDPOINTS (10 a Service),
 *      BENCH_INFLIGHT (64).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import dnsPacket from 'dns-packet';

const SERVICES = Number(process.env['BENCH_SERVICES'] ?? 1000);
const ENDPOINTS = Number(process.env['BENCH_ENDPOINTS'] ?? 10);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 4);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const INFLIGHT = Number(process.env['BENCH_INFLIGHT'] ?? 64);
const NAMESPACES = 100;
const svcName = (i: number) => ({ name: `svc-${i}`, ns: `ns-${i % NAMESPACES}` });

// ---- child roles --------------------------------------------------------------------------
async function serverRole(): Promise<void> {
  const { EndpointSlices, Namespaces, Services } = await import('@mk8s/api');
  const { FakeInformerFactory } = await import('@mk8s/client/testing');
  const { silentLogger } = await import('@mk8s/component-base');
  const { DnsCache, DnsServer } = await import('@mk8s/cluster-dns');
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
  gc(); gc();
  const heap0 = process.memoryUsage().heapUsed;
  const f = new FakeInformerFactory();
  const services = f.informerFor(Services); const slices = f.informerFor(EndpointSlices); const namespaces = f.informerFor(Namespaces);
  const cache = new DnsCache({ records: { zone: 'cluster.local' }, services: services as never, endpointSlices: slices as never, namespaces: namespaces as never });
  for (let n = 0; n < NAMESPACES; n++) namespaces.add({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}`, uid: `u-ns-${n}` } });
  for (let i = 0; i < SERVICES; i++) {
    const { name, ns } = svcName(i);
    services.add({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns, uid: `u-${i}`, labels: { app: name } },
      spec: { clusterIP: `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`, clusterIPs: [`10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`], selector: { app: name }, ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] } });
    slices.add({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${name}-abcde`, namespace: ns, uid: `u-s-${i}`, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: Array.from({ length: ENDPOINTS }, (_, e) => ({ addresses: [`10.244.${(i * ENDPOINTS + e) >> 8 & 255}.${(i * ENDPOINTS + e) & 255}`], conditions: { ready: true, serving: true, terminating: false }, nodeName: `node-${e % 2}`, targetRef: { kind: 'Pod', name: `${name}-${e}`, namespace: ns } })) });
  }
  gc(); gc();
  const heap1 = process.memoryUsage().heapUsed;
  const dns = new DnsServer({ store: cache.store, port: 0, host: '127.0.0.1', logger: silentLogger() });
  const port = await dns.listen();
  console.log(JSON.stringify({ port, heapMiB: (heap1 - heap0) / 2 ** 20, records: cache.store.size(), rssMiB: process.memoryUsage().rss / 2 ** 20 }));
}

async function floorRole(): Promise<void> {
  const s = createSocket('udp4');
  s.on('message', (m, r) => { const b = Buffer.from(m); b[2] = b[2]! | 0x80; s.send(b, r.port, r.address); });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  console.log(JSON.stringify({ port: s.address().port }));
}

// ---- the load ------------------------------------------------------------------------------
function queries(): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < 2000; i++) {
    const { name, ns } = svcName((i * 7919) % SERVICES);
    const r = i % 10;
    const q = r < 6 ? { name: `${name}.${ns}.svc.cluster.local`, type: 'A' as const }
      : r < 8 ? { name: `_http._tcp.${name}.${ns}.svc.cluster.local`, type: 'SRV' as const }
        : { name: `nope-${i}.${ns}.svc.cluster.local`, type: 'A' as const };
    out.push(dnsPacket.encode({ id: 0, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [q] }));
  }
  return out;
}

interface LoadResult { qps: number; p50: number; p99: number; lost: number }

async function load(port: number, seconds: number, inflight = INFLIGHT): Promise<LoadResult> {
  const qs = queries();
  const sockets: Socket[] = await Promise.all(Array.from({ length: Math.min(4, inflight) }, () => new Promise<Socket>((r) => { const s = createSocket('udp4'); s.bind(0, '127.0.0.1', () => r(s)); })));
  const perSocket = Math.max(1, Math.floor(inflight / sockets.length));
  const lat: number[] = [];
  let done = 0; let lost = 0; let qi = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(sockets.map((s) => new Promise<void>((resolve) => {
    const sent = new Map<number, number>();
    let nextId = 1; let active = 0;
    const fire = () => {
      if (performance.now() >= end) { if (active === 0) resolve(); return; }
      const id = nextId = (nextId % 65535) + 1;
      const b = Buffer.from(qs[qi++ % qs.length]!);
      b.writeUInt16BE(id, 0);
      sent.set(id, performance.now()); active++;
      s.send(b, port, '127.0.0.1');
    };
    s.on('message', (m) => {
      const id = m.readUInt16BE(0); const t = sent.get(id);
      if (t === undefined) return;
      sent.delete(id); active--; done++;
      lat.push(performance.now() - t);
      fire();
    });
    // A lost datagram would stall its slot: re-arm slots idle for 1 s.
    const timer = setInterval(() => {
      const now = performance.now();
      for (const [id, t] of sent) if (now - t > 1000) { sent.delete(id); active--; lost++; fire(); }
      if (now >= end && active === 0) { clearInterval(timer); resolve(); }
    }, 200);
    for (let i = 0; i < perSocket; i++) fire();
  })));
  for (const s of sockets) s.close();
  lat.sort((a, b) => a - b);
  return { qps: done / seconds, p50: lat[Math.floor(lat.length * 0.5)] ?? NaN, p99: lat[Math.floor(lat.length * 0.99)] ?? NaN, lost };
}

function startChild(role: 'server' | 'floor'): Promise<{ proc: ChildProcess; info: Record<string, number> }> {
  const proc = spawn(process.execPath, ['--expose-gc', ...process.execArgv, new URL(import.meta.url).pathname], { env: { ...process.env, BENCH_ROLE: role }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', (l) => resolve({ proc, info: JSON.parse(l) as Record<string, number> }));
    proc.once('exit', (code) => reject(new Error(`${role} exited (${code})`)));
  });
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] ?? NaN; };

async function main(): Promise<void> {
  const role = process.env['BENCH_ROLE'];
  if (role === 'server') return serverRole();
  if (role === 'floor') return floorRole();
  const load0 = loadavg()[0]!;
  const server = await startChild('server');
  const floor = await startChild('floor');
  try {
    await load(server.info['port']!, 1); await load(floor.info['port']!, 1);     // warm-up (JIT, sockets)
    const ours: LoadResult[] = []; const raw: LoadResult[] = [];
    const ours1: LoadResult[] = []; const raw1: LoadResult[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const pair = async (inflight: number, a: LoadResult[], b: LoadResult[]) => {
        if (r % 2 === 0) { a.push(await load(server.info['port']!, SECONDS, inflight)); b.push(await load(floor.info['port']!, SECONDS, inflight)); }
        else { b.push(await load(floor.info['port']!, SECONDS, inflight)); a.push(await load(server.info['port']!, SECONDS, inflight)); }
      };
      await pair(INFLIGHT, ours, raw);
      await pair(1, ours1, raw1);
    }
    const m = (xs: LoadResult[], k: keyof LoadResult) => median(xs.map((x) => x[k]));
    const row = (name: string, a: number, b: number, ratio: string, goal: string) => console.log(`${name.padEnd(44)} ${a.toFixed(2).padStart(10)} ${Number.isNaN(b) ? '-'.padStart(14) : b.toFixed(2).padStart(14)} ${ratio.padStart(10)}   ${goal}`);
    console.log(`bench/dns: ${SERVICES} Services × ${ENDPOINTS} endpoints, A 60% / SRV 20% / NXDOMAIN 20%, ${INFLIGHT} in flight, ${ROUNDS} rounds × ${SECONDS} s, load ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`);
    console.log(`${'figure'.padEnd(44)} ${'cluster-dns'.padStart(10)} ${'raw floor'.padStart(14)} ${'ratio'.padStart(10)}`);
    row('queries/s', m(ours, 'qps'), m(raw, 'qps'), (m(ours, 'qps') / m(raw, 'qps')).toFixed(2), 'goal ≥ 0.5');
    row(`latency p50, ${INFLIGHT} in flight (ms)`, m(ours, 'p50'), m(raw, 'p50'), (m(ours, 'p50') / m(raw, 'p50')).toFixed(2), 'goal (reported: in flight ÷ queries/s)');
    row(`latency p99, ${INFLIGHT} in flight (ms)`, m(ours, 'p99'), m(raw, 'p99'), (m(ours, 'p99') / m(raw, 'p99')).toFixed(2), 'goal (reported)');
    row('latency p50, 1 in flight (ms)', m(ours1, 'p50'), m(raw1, 'p50'), (m(ours1, 'p50') / m(raw1, 'p50')).toFixed(2), 'goal (reported)');
    row('latency p99, 1 in flight (ms)', m(ours1, 'p99'), m(raw1, 'p99'), (m(ours1, 'p99') / m(raw1, 'p99')).toFixed(2), 'goal p99 ≤ 5 ms');
    row('queries lost (sum of rounds)', ours.reduce((a, x) => a + x.lost, 0), raw.reduce((a, x) => a + x.lost, 0), '', 'goal 0');
    row('heap: informer caches + records (MiB)', server.info['heapMiB']!, NaN, '', `goal (reported; ${server.info['records']} records)`);
    row('RSS of the server process (MiB)', server.info['rssMiB']!, NaN, '', 'goal (reported)');
  } finally {
    server.proc.kill(); floor.proc.kill();
  }
}

await main();
