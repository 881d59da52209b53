/**
 * bench/cni: mk8s-bridge's own ADD/DEL time, as the cri-docker shim runs it (in-process
 * runPlugin), N sequential then N concurrent ADDs (a burst on one node), against the raw floor
 * measured in the same run: the very same link work as bare iproute2 (one `ip -force -batch` for
 * the host side, one `nsenter --net= ip -batch` for the pod side), no IPAM, no plugin. Also the
 * plugin's non-link part alone (IPAM + lock, FakeLinkOps), and the spec binary (a node process per
 * ADD) sequentially. Everything runs in a throwaway "node" netns with throwaway pod netns and
 * data dir, removed at the end (also on failure).
 * Run (root, iproute2): node --conditions=@mk8s/source --import tsx bench/cni/run.ts
 *   BENCH_CNI_PODS (default 30).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { runPlugin } from '@mk8s/cni/bridge-plugin';
import { FakeLinkOps } from '@mk8s/cni/testing';
import { fmt, printHeader, printRow, summarize } from '../lib.js';

const N = Number(process.env['BENCH_CNI_PODS'] ?? 30);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sh = (cmd: string, args: string[], input?: string) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...(input !== undefined ? { input } : {}) });
  return { code: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
};

if (!process.env['MK8S_BENCH_CNI_NODE']) {
  // Outer: make the node netns and re-run this file inside it (as the shim runs in the node's netns).
  const id = randomBytes(3).toString('hex');
  const node = `mk8s-bench-cni-${id}`;
  if (sh('ip', ['netns', 'add', node]).code !== 0) throw new Error('ip netns add failed (root?)');
  let code = 1;
  try {
    sh('ip', ['-n', node, 'link', 'set', 'lo', 'up']);
    const r = spawnSync('ip', ['netns', 'exec', node, process.execPath, ...process.execArgv, fileURLToPath(import.meta.url)], {
      stdio: 'inherit', env: { ...process.env, MK8S_BENCH_CNI_NODE: node, MK8S_BENCH_CNI_ID: id },
    });
    code = r.status ?? 1;
  } finally {
    for (const ns of sh('ip', ['netns', 'list']).stdout.split('\n').map((l) => l.split(' ')[0]!)) {
      if (ns.startsWith(`mk8s-bench-cnipod-${id}-`)) sh('ip', ['netns', 'del', ns]);
    }
    sh('ip', ['netns', 'del', node]);
  }
  process.exit(code);
}

const id = process.env['MK8S_BENCH_CNI_ID']!;
const dataDir = mkdtempSync(join(tmpdir(), 'mk8s-bench-cni-'));
const POD_CIDR = '10.252.0.0/22';
let podSeq = 0;
const newPods = (n: number) => Array.from({ length: n }, () => {
  const name = `mk8s-bench-cnipod-${id}-${podSeq++}`;
  if (sh('ip', ['netns', 'add', name]).code !== 0) throw new Error(`ip netns add ${name}`);
  return `/var/run/netns/${name}`;
});
const delPods = (paths: string[]) => { for (const p of paths) sh('ip', ['netns', 'del', p.split('/').pop()!]); };
const conf = (network: string) => JSON.stringify({ cniVersion: '1.0.0', name: network, type: 'mk8s-bridge', podCIDR: POD_CIDR, dataDir });
const env = (command: string, containerId: string, netns: string) => ({
  CNI_COMMAND: command, CNI_CONTAINERID: containerId, CNI_NETNS: netns, CNI_IFNAME: 'eth0', CNI_PATH: join(ROOT, 'cni/bin'), PATH: process.env['PATH'] ?? '',
});

async function timed(fn: () => Promise<unknown>): Promise<number> { const t = performance.now(); await fn(); return performance.now() - t; }
async function phase(pods: string[], parallel: boolean, one: (i: number, netns: string) => Promise<unknown>): Promise<{ lat: number[]; wallMs: number }> {
  const t = performance.now();
  const lat = parallel
    ? await Promise.all(pods.map((p, i) => timed(() => one(i, p))))
    : await (async () => { const out: number[] = []; for (const [i, p] of pods.entries()) out.push(await timed(() => one(i, p))); return out; })();
  return { lat, wallMs: performance.now() - t };
}
const must = async (p: Promise<{ code: number; stdout: string }>) => { const r = await p; if (r.code !== 0) throw new Error(r.stdout); return r; };

/** The floor: the plugin's link work as bare iproute2, addresses chosen up front. */
const { spawn } = await import('node:child_process');
const run = (cmd: string, args: string[], input?: string) => new Promise<number>((resolve, reject) => {
  const p = spawn(cmd, args, { stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'ignore'] });
  p.on('error', reject); p.on('close', (c) => resolve(c ?? 1));
  if (p.stdin) p.stdin.end(input);
});
const rawAdd = async (i: number, netns: string) => {
  const veth = `vethraw${id}${i}`.slice(0, 15);
  await run('ip', ['-force', '-batch', '-'], [
    'link add rawbr0 type bridge', 'addr replace 10.253.0.1/22 dev rawbr0', 'link set rawbr0 up',
    `link add ${veth} type veth peer name eth0 netns ${netns}`, `link set ${veth} master rawbr0`,
    `link set ${veth} type bridge_slave hairpin on`, `link set ${veth} up`].join('\n') + '\n');
  await run('nsenter', [`--net=${netns}`, 'ip', '-batch', '-'], [
    'link set lo up', `addr add 10.253.${1 + (i >> 8)}.${i & 255}/22 dev eth0`, 'link set eth0 up', 'route replace default via 10.253.0.1 dev eth0'].join('\n') + '\n');
};
const rawDel = (i: number) => run('ip', ['link', 'del', 'dev', `vethraw${id}${i}`.slice(0, 15)]);

type Row = { name: string; ours: { lat: number[]; wallMs: number }; floor: { lat: number[]; wallMs: number } };
const rows: Row[] = [];
try {
  console.log(`bench/cni: ${N} pods, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  for (const parallel of [false, true]) {
    const tag = parallel ? `${N} concurrent` : `${N} sequential`;
    const pods = newPods(N);
    const floorAdd = await phase(pods, parallel, (i, p) => rawAdd(i, p));
    const floorDel = await phase(pods, parallel, (i) => rawDel(i));
    delPods(pods);
    const pods2 = newPods(N);
    const oursAdd = await phase(pods2, parallel, (i, p) => must(runPlugin({ env: env('ADD', `c${parallel ? 'p' : 's'}${i}`, p), stdin: conf('bench') })));
    const oursDel = await phase(pods2, parallel, (i, p) => must(runPlugin({ env: env('DEL', `c${parallel ? 'p' : 's'}${i}`, p), stdin: conf('bench') })));
    delPods(pods2);
    rows.push({ name: `ADD, ${tag}`, ours: oursAdd, floor: floorAdd }, { name: `DEL, ${tag}`, ours: oursDel, floor: floorDel });
  }
  // The non-link part alone: IPAM + lock with FakeLinkOps, concurrent (what a burst queues on).
  const fake = new FakeLinkOps();
  const fakeAdd = await phase(Array.from({ length: N }, (_, i) => `/fake/${i}`), true, (i, p) => must(runPlugin({ env: env('ADD', `f${i}`, p), stdin: conf('fake'), links: fake })));
  // The spec binary: a node process per ADD (what any exec'ing runtime pays), sequential.
  const bin = join(ROOT, 'cni/bin/mk8s-bridge');
  const binPods = newPods(Math.min(N, 5));
  const binLat: number[] = [];
  for (const [i, p] of binPods.entries()) {
    const t = performance.now();
    const r = spawnSync(bin, [], { input: conf('bin2'), env: env('ADD', `b${i}`, p), encoding: 'utf8' });
    binLat.push(performance.now() - t);
    if (r.status !== 0) throw new Error(`binary ADD: ${r.stdout} ${r.stderr}`);
  }
  delPods(binPods);

  printHeader('mk8s-bridge ADD/DEL (in-process, as the shim runs it) vs bare iproute2 doing the same link work');
  for (const r of rows) {
    const o = summarize(r.ours.lat); const f = summarize(r.floor.lat);
    printRow(`${r.name}: p50 ms`, fmt(o.p50, 1), fmt(f.p50, 1), fmt(o.p50 / f.p50), '≤ 1.5');
    printRow(`${r.name}: p99 ms`, fmt(o.p99, 1), fmt(f.p99, 1), fmt(o.p99 / f.p99), '≤ 1.5');
    printRow(`${r.name}: wall ms`, fmt(r.ours.wallMs, 0), fmt(r.floor.wallMs, 0), fmt(r.ours.wallMs / r.floor.wallMs), '≤ 1.5');
  }
  const fk = summarize(fakeAdd.lat);
  console.log(`IPAM + lock alone (FakeLinkOps), ${N} concurrent ADDs: p50 ${fmt(fk.p50, 1)} ms, p99 ${fmt(fk.p99, 1)} ms, wall ${fmt(fakeAdd.wallMs, 0)} ms`);
  const bl = summarize(binLat);
  console.log(`spec binary (node process per ADD), ${binLat.length} sequential: p50 ${fmt(bl.p50, 0)} ms, max ${fmt(Math.max(...binLat), 0)} ms`);
  console.log(`load after: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
