/**
 * bench/network: kube-proxy and the pod network, as ratios to the raw floor in the same run,
 * all inside throwaway network namespaces (removed at the end, also on failure):
 *  1. kube-proxy full sync of 1,000 Services × 10 endpoints (iptables-save, rendering, one
 *     iptables-restore with the jumps) ÷ a raw iptables-restore of the same rules and jumps into
 *     an empty netns; rounds alternate which of the two goes first, median of the rounds;
 *  2. one-Service change latency as the issue defines it: from the EndpointSlice change being
 *     visible at a real apiserver (its update response or the watch event, whichever comes first)
 *     to the rule being in the kernel (kube-proxy's iptables-restore returned), with the
 *     breakdown (watch delivery, wait for the sync, render, restore) and, as the floor, a raw
 *     iptables-restore of the very same incremental input into a netns holding the same rules,
 *     exec'd and timed by a shell inside that netns (bash $EPOCHREALTIME around it: fork + exec
 *     + restore, no nsenter, no big parent). kube-proxy runs with the cluster's
 *     --min-sync-period (1s, upstream's default) and changes come ≥ 1.2 s apart: each is a
 *     single change outside the min sync period. Every other change goes through a cold exec
 *     (prespawn off, from this process via nsenter: the path before the prespawned restore),
 *     an A/B under the same load;
 *  3. Service round trip ÷ direct pod-IP round trip (new TCP connection per request, so every
 *     request takes the DNAT path), client and server pods wired by mk8s-bridge, with the 1,000
 *     Services programmed.
 * Run: node --conditions=@mk8s/source --import tsx bench/network/run.ts   (root, iptables, iproute2, etcd)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EndpointSlices, Namespaces, Services, type KubeObject } from '@mk8s/api';
import { startEtcdCluster } from '@mk8s/apiserver/testing';
import { createClientset, newInformerFactory } from '@mk8s/client';
import { FakeInformer } from '@mk8s/client/testing';
import { realClock, silentLogger } from '@mk8s/component-base';
import { IprouteLinkOps, runCommand, runPlugin, type CommandRunner } from '@mk8s/cni';
import { ExecIptablesRunner, JUMP_RULES, Proxier, endpointsByServicePort, withJumps, type IptablesRunner, renderRules, servicePorts, type EndpointSliceObj, type ServiceObj, type SyncResult } from '@mk8s/kube-proxy';
import { fmt, printHeader, printRow, runConcurrent, summarize } from '../lib.js';

const SERVICES = Number(process.env['BENCH_SERVICES'] ?? 1000);
const ENDPOINTS = Number(process.env['BENCH_ENDPOINTS'] ?? 10);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CHANGES = Number(process.env['BENCH_CHANGES'] ?? 40);
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 300);
const id = randomBytes(3).toString('hex');
const made: string[] = [];
const children: ChildProcess[] = [];
const sh = (args: string[]) => spawnSync(args[0]!, args.slice(1), { encoding: 'utf8', maxBuffer: 1 << 30 });
const netns = (suffix: string) => {
  const name = `mk8s-bench-net-${id}-${suffix}`;
  if (sh(['ip', 'netns', 'add', name]).status !== 0) throw new Error(`ip netns add ${name}`);
  made.push(name);
  sh(['ip', 'netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up']);
  return name;
};
const cleanup = () => { for (const c of children) c.kill('SIGKILL'); for (const n of made.splice(0)) sh(['ip', 'netns', 'del', n]); };
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

// A node's kube-proxy runs inside the node's netns and execs iptables-restore there; nsenter only
// joins the netns (ip netns exec also remounts /sys), the nearest to that. Ours and the floor alike.
const inNetns = (ns: string) => ['nsenter', `--net=/var/run/netns/${ns}`];
const svcIp = (i: number) => `10.100.${i >> 8}.${i & 255}`;
function objects(extra?: { svc: ServiceObj; slice: EndpointSliceObj }): { services: ServiceObj[]; slices: EndpointSliceObj[] } {
  const services: ServiceObj[] = [];
  const slices: EndpointSliceObj[] = [];
  for (let i = 0; i < SERVICES; i++) {
    services.push({ metadata: { name: `svc-${i}`, namespace: 'bench' }, spec: { clusterIP: svcIp(i), ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
    slices.push({
      metadata: { name: `svc-${i}-1`, namespace: 'bench', labels: { 'kubernetes.io/service-name': `svc-${i}` } }, addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: Array.from({ length: ENDPOINTS }, (_, j) => ({ addresses: [`10.245.${(i * ENDPOINTS + j) >> 8 & 255}.${(i * ENDPOINTS + j) & 255}`], conditions: { ready: true } })),
    });
  }
  if (extra) { services.push(extra.svc); slices.push(extra.slice); }
  return { services, slices };
}
function newProxier(ns: string, o: { services: ServiceObj[]; slices: EndpointSliceObj[] }) {
  const services = new FakeInformer<ServiceObj>(Services);
  const slices = new FakeInformer<EndpointSliceObj>(EndpointSlices);
  services.seed(...o.services);
  slices.seed(...o.slices);
  // One sync each: no waiting restore to start afterwards (its fork would land in the raw run).
  const iptables = new ExecIptablesRunner({ prefix: inNetns(ns), prespawn: false });
  const proxier = new Proxier({ services, endpointSlices: slices, iptables, clusterCidr: '10.244.0.0/16', minSyncPeriodMs: 0, syncPeriodMs: 3_600_000, clock: realClock, logger: silentLogger() });
  return { proxier, services, slices };
}
const restoreRaw = (ns: string, text: string) => new Promise<number>((resolve, reject) => {
  const t = performance.now();
  const [cmd, ...args] = [...inNetns(ns), 'iptables-restore', '-w', '5', '--noflush'];
  const p = spawn(cmd!, args, { stdio: ['pipe', 'ignore', 'pipe'] });
  let err = '';
  p.stderr.on('data', (b: Buffer) => { err += b.toString(); });
  p.on('close', (code) => (code === 0 ? resolve(performance.now() - t) : reject(new Error(`iptables-restore: ${err}`))));
  p.stdin.end(text);
});
/**
 * The floor of a small restore: iptables-restore exec'd by a shell already in the netns, timed by
 * that shell (fork + exec + the restore itself; no nsenter, no fork of a large process).
 */
const restoreInNetns = (ns: string, text: string, file: string) => {
  writeFileSync(file, text);
  const r = sh([...inNetns(ns), 'bash', '-c', `s=$EPOCHREALTIME; iptables-restore -w 5 --noflush < '${file}'; rc=$?; e=$EPOCHREALTIME; echo "$rc $s $e"`]);
  const [rc, t0, t1] = r.stdout.trim().split(' ').map(Number);
  if (rc !== 0 || r.status !== 0) throw new Error(`iptables-restore in ${ns}: ${r.stderr}`);
  return (t1! - t0!) * 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Full sync ÷ raw restore; returns the raw netns of the last round (it holds the rules) for the change floor. */
async function fullSync(): Promise<{ floorNs: string; text: string }> {
  const o = objects();
  // With the jumps from the built-in chains, as on a node (and in our full sync): on nft each
  // commit re-validates every rule reachable from them, the bulk of a small restore's time.
  const text = withJumps(renderRules({ services: servicePorts(o.services), endpoints: endpointsByServicePort(o.slices), clusterCidr: '10.244.0.0/16' }).text, JUMP_RULES);
  const ours: number[] = [];
  const raw: number[] = [];
  const render: number[] = [];
  let floorNs = '';
  for (let r = 0; r < ROUNDS; r++) {
    const a = netns(`a${r}`);
    const b = netns(`b${r}`);
    const runOurs = async () => {
      const { proxier } = newProxier(a, o);
      const t = performance.now();
      const res = await proxier.syncProxyRules();
      ours.push(performance.now() - t);
      if (!res.applied || !res.full || !res.perf) throw new Error('the first sync was not a full one');
      render.push(res.perf.rendered - res.perf.start);
      proxier.stop();
    };
    // Alternate who goes first: the machine's load drifts over minutes.
    if (r % 2 === 0) { raw.push(await restoreRaw(b, text)); await runOurs(); } else { await runOurs(); raw.push(await restoreRaw(b, text)); }
    process.stderr.write(`round ${r}: ours ${fmt(ours.at(-1)!, 0)} ms, raw ${fmt(raw.at(-1)!, 0)} ms, load ${loadavg()[0]!.toFixed(1)}\n`);
    // Namespaces go at the end: tearing down 32,000 rules is kernel work in the background that
    // would slow whichever restore comes next.
    floorNs = b;
  }
  printHeader(`kube-proxy: ${SERVICES} Services × ${ENDPOINTS} endpoints (median of ${ROUNDS}, ${text.split('\n').length} restore lines)`);
  printRow('full sync (ms) ÷ raw iptables-restore', fmt(median(ours), 0), fmt(median(raw), 0), `${fmt(median(ours) / median(raw))}×`, '≤ 1.2×');
  printRow('  of which render + save wait (ms)', fmt(median(render), 0), '', '', '(reported)');
  return { floorNs, text };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a ? a.port : 0)); });
  });
}

/**
 * One-Service change latency against a real apiserver (own process, 1-member etcd): kube-proxy
 * with real informers in its own netns; each change updates one EndpointSlice (one endpoint out,
 * one in) and is timed from visible-at-the-apiserver to the restore that carries it returning.
 */
async function changeLatency(floorNs: string): Promise<void> {
  const etcd = await startEtcdCluster({ members: 1 });
  const port = await freePort();
  const root = new URL('../..', import.meta.url).pathname;
  const api = spawn(process.execPath, ['--conditions=@mk8s/source', '--import', 'tsx', join(root, 'apiserver/src/main.ts'),
    '--etcd-servers', etcd.endpoints.join(','), '--port', String(port), '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'], cwd: root });
  children.push(api);
  const ac = new AbortController();
  try {
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try { if ((await fetch(`${url}/readyz`)).ok) break; } catch { /* not yet */ }
      if (api.exitCode !== null || i > 600) throw new Error('apiserver did not become ready');
      await new Promise((r) => setTimeout(r, 200));
    }
    const client = createClientset({ server: url, qps: 0 });
    await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } } as KubeObject);
    const o = objects();
    const svcs = client.resource<ServiceObj>(Services, 'bench');
    const sls = client.resource<EndpointSliceObj>(EndpointSlices, 'bench');
    await runConcurrent(SERVICES, 16, async (i) => { await svcs.create({ apiVersion: 'v1', kind: 'Service', ...o.services[i]! }); });
    const stored = new Map<string, EndpointSliceObj>();
    await runConcurrent(SERVICES, 16, async (i) => { const s = await sls.create({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', ...o.slices[i]! }); stored.set(s.metadata.name, s); });
    process.stderr.write(`created ${SERVICES} Services + EndpointSlices, load ${loadavg()[0]!.toFixed(1)}\n`);

    const node = netns('proxy');
    const factory = newInformerFactory({ client: createClientset({ server: url, qps: 0 }), clock: realClock });
    const services = factory.informerFor<ServiceObj>(Services);
    const slices = factory.informerFor<EndpointSliceObj>(EndpointSlices);
    const syncs: SyncResult[] = [];
    const onSync: ((r: SyncResult) => void)[] = [];
    // A/B in one run: even changes through the prespawned restore (the default), odd ones through
    // a cold exec from this process (the path before it). Same proxier, same load.
    const warm = new ExecIptablesRunner({ prefix: inNetns(node) });
    const cold = new ExecIptablesRunner({ prefix: inNetns(node), prespawn: false });
    let useCold = false;
    const iptables: IptablesRunner = {
      restore: (input, opts) => (useCold ? cold : warm).restore(input, opts),
      listChains: (t) => warm.listChains(t), save: () => warm.save(),
      ensureRule: (t, c, a) => warm.ensureRule(t, c, a), deleteRule: (t, c, a) => warm.deleteRule(t, c, a),
    };
    const proxier = new Proxier({ services, endpointSlices: slices, iptables, clusterCidr: '10.244.0.0/16', minSyncPeriodMs: 1000, syncPeriodMs: 3_600_000, clock: realClock, logger: silentLogger(), onSync: (r) => { syncs.push(r); for (const f of onSync) f(r); } });
    // Registered after the proxier's handler: it runs in the same tick, right after the proxier saw the event.
    const seen = new Map<string, number>();
    slices.addEventHandler({ onUpdate: (_a, b) => { seen.set(b.metadata.resourceVersion ?? '', performance.now()); } });
    factory.start(ac.signal);
    await factory.waitForCacheSync(ac.signal);
    const first = proxier.nextSync();
    proxier.start();
    await first;
    process.stderr.write(`first full sync with informers: ${fmt(syncs[0]!.perf!.done - syncs[0]!.perf!.start, 0)} ms, load ${loadavg()[0]!.toFixed(1)}\n`);

    const newRows = () => ({ write: [] as number[], watch: [] as number[], wait: [] as number[], render: [] as number[], restore: [] as number[], total: [] as number[], floor: [] as number[], inputBytes: [] as number[] });
    const warmRows = newRows();
    const coldRows = newRows();
    const inputFile = join(tmpdir(), `mk8s-bench-net-${id}.restore`);
    for (let c = 0; c < CHANGES; c++) {
      await new Promise((r) => setTimeout(r, 1200));          // outside the 1 s min sync period
      useCold = c % 2 === 1;
      const rows = useCold ? coldRows : warmRows;
      const base = stored.get(`svc-${c}-1`)!;
      const next: EndpointSliceObj = { ...base, endpoints: [...(base.endpoints ?? []).slice(1), { addresses: [`10.246.0.${c + 1}`], conditions: { ready: true } }] };
      const synced = new Promise<SyncResult>((resolve) => { onSync.push((r) => { if (r.applied && r.input?.includes(`10.246.0.${c + 1}:8080`)) resolve(r); }); });
      const sent = performance.now();
      const updated = await sls.update(next);
      const responded = performance.now();
      stored.set(updated.metadata.name, updated);
      const r = await synced;
      onSync.length = 0;
      const event = seen.get(updated.metadata.resourceVersion ?? '') ?? NaN;
      const visible = Math.min(responded, event);
      rows.write.push(responded - sent);
      rows.watch.push(event - responded);
      rows.wait.push(r.perf!.start - event);
      rows.render.push(r.perf!.rendered - r.perf!.start);
      rows.restore.push(r.perf!.done - r.perf!.rendered);
      rows.total.push(r.perf!.done - visible);
      rows.inputBytes.push(r.input!.length);
      rows.floor.push(restoreInNetns(floorNs, r.input!, inputFile));
    }
    rmSync(inputFile, { force: true });
    // The rules are really there: every new endpoint's DNAT, none of the removed ones'.
    const saved = sh(['ip', 'netns', 'exec', node, 'iptables-save', '-t', 'nat']).stdout;
    for (let c = 0; c < CHANGES; c++) {
      if (!saved.includes(`--to-destination 10.246.0.${c + 1}:8080`)) throw new Error(`change ${c}: its rule is not in the kernel`);
    }
    proxier.stop();
    warm.close();
    const p = (xs: number[], d = 1) => { const x = summarize(xs); return `${fmt(x.p50, d)} / ${fmt(x.p99, d)}`; };
    const rows = warmRows;
    printHeader(`one-Service change, apiserver → rule in the kernel (n=${rows.total.length}, p50 / p99 ms, min sync period 1 s)`);
    printRow('change latency ÷ raw restore of same input', p(rows.total), p(rows.floor), `${fmt(summarize(rows.total).p50 / summarize(rows.floor).p50)}×`, '≤ 50 ms');
    printRow('  watch delivery (after the response)', p(rows.watch), '', '', '(breakdown)');
    printRow('  wait for the sync to start', p(rows.wait), '', '', '');
    printRow('  render (dirty Services only)', p(rows.render), '', '', '');
    printRow('  iptables-restore (our exec)', p(rows.restore), '', '', '');
    printRow('  (apiserver write itself, not counted)', p(rows.write), '', '', '');
    printRow('  restore input (bytes)', p(rows.inputBytes, 0), '', '', '');
    printRow(`cold exec instead (n=${coldRows.total.length}, A/B): latency`, p(coldRows.total), p(coldRows.floor), `${fmt(summarize(coldRows.total).p50 / summarize(coldRows.floor).p50)}×`, '(before prespawn)');
    printRow('  iptables-restore (cold exec via nsenter)', p(coldRows.restore), '', '', '');
  } finally {
    ac.abort();
    api.kill('SIGTERM');
    await etcd.stop();
  }
}

async function roundTrip(): Promise<void> {
  const node = netns('node');
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-bench-net-'));
  try {
    sh(['ip', 'netns', 'exec', node, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    const nodeRun: CommandRunner = (cmd, args, stdin) => runCommand('ip', ['netns', 'exec', node, cmd, ...args], stdin);
    const ips: Record<string, string> = {};
    for (const name of ['srv', 'cli']) {
      const ns = netns(name);
      const r = await runPlugin({
        env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: `${id}-${name}`, CNI_NETNS: `/var/run/netns/${ns}`, CNI_IFNAME: 'eth0' },
        stdin: JSON.stringify({ cniVersion: '1.0.0', name: 'bench', type: 'mk8s-bridge', podCIDR: '10.244.7.0/24', dataDir: join(dir, 'ipam') }),
        links: new IprouteLinkOps(nodeRun),
      });
      if (r.code !== 0) throw new Error(`CNI ADD ${name}: ${r.stdout}`);
      ips[name] = (JSON.parse(r.stdout) as { ips: { address: string }[] }).ips[0]!.address.split('/')[0]!;
    }
    const srvNs = made.find((n) => n.endsWith('-srv'))!;
    const cliNs = made.find((n) => n.endsWith('-cli'))!;
    children.push(spawn('ip', ['netns', 'exec', srvNs, process.execPath, '-e', "require('http').createServer((q,s)=>s.end('ok')).listen(8080)"], { stdio: 'ignore' }));
    const target = {
      svc: { metadata: { name: 'target', namespace: 'bench' }, spec: { clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } } as ServiceObj,
      slice: { metadata: { name: 'target-1', namespace: 'bench', labels: { 'kubernetes.io/service-name': 'target' } }, addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: [{ addresses: [ips['srv']!], conditions: { ready: true } }] } as EndpointSliceObj,
    };
    const { proxier } = newProxier(node, objects(target));
    await proxier.syncProxyRules();
    proxier.stop();
    // Client in the pod: fresh connection per request, direct and via the Service interleaved.
    const script = `
      const http = require('http');
      const get = (host, port) => new Promise((res, rej) => { const t = process.hrtime.bigint();
        http.get({ host, port, path: '/', agent: false }, (r) => { r.resume(); r.on('end', () => res(Number(process.hrtime.bigint() - t) / 1e6)); }).on('error', rej); });
      (async () => {
        for (let i = 0; i < 20; i++) { await get('${ips['srv']}', 8080); await get('10.96.0.10', 80); }
        const d = [], s = [];
        for (let i = 0; i < ${REQUESTS}; i++) { d.push(await get('${ips['srv']}', 8080)); s.push(await get('10.96.0.10', 80)); }
        console.log(JSON.stringify({ d, s }));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    let out = '';
    for (let i = 0; i < 50 && !out; i++) {
      const r = sh(['ip', 'netns', 'exec', cliNs, process.execPath, '-e', script]);
      if (r.status === 0) out = r.stdout; else await new Promise((res) => setTimeout(res, 100));
    }
    if (!out) throw new Error('the round-trip client never succeeded');
    const { d, s } = JSON.parse(out) as { d: number[]; s: number[] };
    const ds = summarize(d);
    const ss = summarize(s);
    printHeader(`Service round trip, new connection per request (n=${REQUESTS} each, ${SERVICES + 1} Services programmed)`);
    printRow('round trip p50 (ms): Service ÷ pod IP', fmt(ss.p50, 3), fmt(ds.p50, 3), `${fmt(ss.p50 / ds.p50)}×`, '≤ 1.1×');
    printRow('round trip p99 (ms): Service ÷ pod IP', fmt(ss.p99, 3), fmt(ds.p99, 3), `${fmt(ss.p99 / ds.p99)}×`, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  console.log(`load average at start: ${loadavg().map((x) => x.toFixed(1)).join(' ')} (${new Date().toISOString()})`);
  const { floorNs } = await fullSync();
  await changeLatency(floorNs);
  await roundTrip();
  console.log(`\nload average at end: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
} finally {
  cleanup();
}
