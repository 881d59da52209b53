/**
 * bench/network: kube-proxy and the pod network, as ratios to the raw floor in the same run,
 * all inside throwaway network namespaces (removed at the end, also on failure):
 *  1. kube-proxy full sync of 1,000 Services × 10 endpoints (listing chains, rendering, one
 *     iptables-restore, jumps) ÷ a raw iptables-restore of the same rules into an empty netns;
 *  2. one-Service change latency: an EndpointSlice update → its incremental restore done;
 *  3. Service round trip ÷ direct pod-IP round trip (new TCP connection per request, so every
 *     request takes the DNAT path), client and server pods wired by mk8s-bridge, with the 1,000
 *     Services programmed.
 * Run: node --conditions=@mk8s/source --import tsx bench/network/run.ts   (root, iptables, iproute2)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EndpointSlices, Services } from '@mk8s/api';
import { FakeInformer } from '@mk8s/client/testing';
import { realClock, silentLogger } from '@mk8s/component-base';
import { IprouteLinkOps, runCommand, runPlugin, type CommandRunner } from '@mk8s/cni';
import { ExecIptablesRunner, Proxier, endpointsByServicePort, incrementalRestoreInput, renderRules, servicePorts, type EndpointSliceObj, type ServiceObj } from '@mk8s/kube-proxy';
import { fmt, printHeader, printRow, summarize } from '../lib.js';

const SERVICES = Number(process.env['BENCH_SERVICES'] ?? 1000);
const ENDPOINTS = Number(process.env['BENCH_ENDPOINTS'] ?? 10);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CHANGES = Number(process.env['BENCH_CHANGES'] ?? 20);
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 300);
const id = randomBytes(3).toString('hex');
const made: string[] = [];
const children: ChildProcess[] = [];
const sh = (args: string[]) => spawnSync(args[0]!, args.slice(1), { encoding: 'utf8' });
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
  const proxier = new Proxier({ services, endpointSlices: slices, iptables: new ExecIptablesRunner({ prefix: ['ip', 'netns', 'exec', ns] }), clusterCidr: '10.244.0.0/16', minSyncPeriodMs: 0, syncPeriodMs: 3_600_000, clock: realClock, logger: silentLogger() });
  return { proxier, services, slices };
}
const restoreRaw = (ns: string, text: string) => new Promise<number>((resolve, reject) => {
  const t = performance.now();
  const p = spawn('ip', ['netns', 'exec', ns, 'iptables-restore', '-w', '5', '--noflush'], { stdio: ['pipe', 'ignore', 'pipe'] });
  let err = '';
  p.stderr.on('data', (b: Buffer) => { err += b.toString(); });
  p.on('close', (code) => (code === 0 ? resolve(performance.now() - t) : reject(new Error(`iptables-restore: ${err}`))));
  p.stdin.end(text);
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function fullSync(): Promise<void> {
  const o = objects();
  const render = (slices: EndpointSliceObj[]) => renderRules({ services: servicePorts(o.services), endpoints: endpointsByServicePort(slices), clusterCidr: '10.244.0.0/16' });
  const rendered = render(o.slices);
  const text = rendered.text;
  const changeRaw: number[] = [];
  const ours: number[] = [];
  const raw: number[] = [];
  const change: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const a = netns(`a${r}`);
    const b = netns(`b${r}`);
    raw.push(await restoreRaw(b, text));
    const { proxier, slices } = newProxier(a, o);
    let t = performance.now();
    const res = await proxier.syncProxyRules();
    ours.push(performance.now() - t);
    if (!res.applied || !res.full) throw new Error('the first sync was not a full one');
    if (r === 0) {
      for (let c = 0; c < CHANGES; c++) {
        const base = o.slices[c]!;
        const next: EndpointSliceObj = { ...base, endpoints: [...(base.endpoints ?? []).slice(1), { addresses: [`10.246.0.${c + 1}`], conditions: { ready: true } }] };
        const done = proxier.nextSync();
        t = performance.now();
        slices.update(next);        // the informer event → runner → incremental restore
        await done;
        change.push(performance.now() - t);
        // Floor: the same incremental input restored raw into the netns holding the same rules.
        const before = o.slices.map((x, k) => (k < c ? { ...x, endpoints: [...(x.endpoints ?? []).slice(1), { addresses: [`10.246.0.${k + 1}`], conditions: { ready: true } }] } : x));
        const after = before.map((x, k) => (k === c ? next : x));
        changeRaw.push(await restoreRaw(b, incrementalRestoreInput(render(before), render(after))));
      }
    }
    proxier.stop();
    sh(['ip', 'netns', 'del', a]);
    sh(['ip', 'netns', 'del', b]);
    made.splice(made.indexOf(a), 1);
    made.splice(made.indexOf(b), 1);
  }
  printHeader(`kube-proxy: ${SERVICES} Services × ${ENDPOINTS} endpoints (median of ${ROUNDS})`);
  printRow('full sync (ms) ÷ raw iptables-restore', fmt(median(ours), 0), fmt(median(raw), 0), `${fmt(median(ours) / median(raw))}×`, '≤ 1.2×');
  const c = summarize(change);
  const cr = summarize(changeRaw);
  printRow(`one-Service change p50 / p99 (ms, n=${c.n})`, `${fmt(c.p50, 0)} / ${fmt(c.p99, 0)}`, `${fmt(cr.p50, 0)} / ${fmt(cr.p99, 0)}`, `${fmt(c.p50 / cr.p50)}×`, '≤ 50 ms');
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
  await fullSync();
  await roundTrip();
} finally {
  cleanup();
}
