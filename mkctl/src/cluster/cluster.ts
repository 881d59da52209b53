/**
 * `mkctl cluster up|down|status` for the local mode: etcd ×3, the control plane on the host, and
 * N nodes, each a network namespace running its shim, kubelet and kube-proxy. Idempotent: `up`
 * starts only what is not running; `down` stops what `up` started and removes every namespace,
 * link, route, rule and pod container the cluster made.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { statePaths, type StatePaths } from './paths.js';
import { APISERVER_PORT, ETCD_MEMBERS, HOST_BRIDGE_IP, POD_NETWORK, etcdArgs, etcdEndpoints, nodePlan, type NodePlan } from './network-plan.js';
import { isAlive, readPid, run, startProcess, stopProcess, type ProcessSpec } from './processes.js';
import { ensureHostNetwork, ensureNodeNetwork, listNodeNamespaces, removeHostNetwork, removeNodeNetwork } from './host-network.js';
import { renderKubeconfig } from './kubeconfig.js';

export interface UpOptions { nodes: number; out?: (line: string) => void; timeoutMs?: number }

/** One process the launcher manages, and how it knows the process is ready. */
interface Managed { spec: ProcessSpec; ready: () => Promise<boolean>; }

const nodeDir = (p: StatePaths, n: NodePlan) => join(p.nodes, n.name);

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok;
  } catch { return false; }
}

function script(p: StatePaths, pkg: string): string | undefined {
  const f = join(p.root, pkg, 'dist', 'main.js');
  return existsSync(f) ? f : undefined;
}

function controlPlane(p: StatePaths): Managed[] {
  const out: Managed[] = [];
  for (const m of ETCD_MEMBERS) {
    const dataDir = join(p.etcd, m.name);
    const state = existsSync(join(dataDir, 'member')) ? 'existing' : 'new';
    out.push({
      spec: { name: m.name, command: 'etcd', args: etcdArgs(m, dataDir, state) },
      ready: () => httpOk(`http://127.0.0.1:${m.clientPort}/health`),
    });
  }
  const apiserver = script(p, 'apiserver');
  if (apiserver) {
    out.push({
      spec: { name: 'apiserver', command: process.execPath, args: [apiserver, '--etcd-servers', etcdEndpoints().join(','), '--bind-address', `127.0.0.1,${HOST_BRIDGE_IP}`, '--port', String(APISERVER_PORT)] },
      ready: () => httpOk(`http://127.0.0.1:${APISERVER_PORT}/readyz`),
    });
  }
  const hostComponent = (name: string, port: number) => {
    const s = script(p, name);
    if (s) out.push({ spec: { name, command: process.execPath, args: [s, '--kubeconfig', p.kubeconfig, '--health-port', String(port)] }, ready: () => httpOk(`http://127.0.0.1:${port}/healthz`) });
  };
  hostComponent('controller-manager', 10257);
  hostComponent('scheduler', 10259);
  return out;
}

function nodeComponents(p: StatePaths, n: NodePlan): Managed[] {
  const dir = nodeDir(p, n);
  const kubeconfig = join(dir, 'kubeconfig');
  const socket = join(dir, 'cri.sock');
  const out: Managed[] = [];
  const shim = script(p, 'cri-docker');
  if (shim) out.push({
    spec: { name: `${n.name}-cri-docker`, netns: n.netns, command: process.execPath, args: [shim, '--socket', socket, '--node-name', n.name, '--cni-conf-dir', join(dir, 'cni', 'net.d'), '--cni-bin-dir', `${join(p.root, 'cni', 'bin')}:/usr/lib/cni`] },
    ready: async () => existsSync(socket),
  });
  const kubelet = script(p, 'kubelet');
  if (kubelet) out.push({
    spec: { name: `${n.name}-kubelet`, netns: n.netns, command: process.execPath, args: [kubelet, '--kubeconfig', kubeconfig, '--node-name', n.name, '--node-ip', n.ip, '--container-runtime-endpoint', `unix://${socket}`, '--root-dir', join(dir, 'kubelet'), '--health-port', '10248', '--health-bind-address', '0.0.0.0'] },
    ready: () => httpOk(`http://${n.ip}:10248/healthz`),
  });
  const proxy = script(p, 'kube-proxy');
  if (proxy) out.push({
    spec: { name: `${n.name}-kube-proxy`, netns: n.netns, command: process.execPath, args: [proxy, '--kubeconfig', kubeconfig, '--node-name', n.name, '--health-port', '10256', '--health-bind-address', '0.0.0.0',
      '--cluster-cidr', POD_NETWORK, '--min-sync-period', '1s',
      // kube-proxy also runs the node route agent (host-gw routes, the mk8s-bridge CNI conflist): see kube-proxy/README.md.
      '--route-agent', '--cni-conf-dir', join(dir, 'cni', 'net.d'), '--cni-data-dir', join(dir, 'cni', 'ipam')] },
    ready: () => httpOk(`http://${n.ip}:10256/healthz`),
  });
  return out;
}

async function waitReady(m: Managed, p: StatePaths, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await m.ready()) return;
    if (!isAlive(readPid(p.run, m.spec.name))) throw new Error(`${m.spec.name} exited; see ${join(p.logs, m.spec.name + '.log')}\n${tail(join(p.logs, m.spec.name + '.log'))}`);
    if (Date.now() > deadline) throw new Error(`${m.spec.name} not ready after ${timeoutMs / 1000}s; see ${join(p.logs, m.spec.name + '.log')}\n${tail(join(p.logs, m.spec.name + '.log'))}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function tail(file: string, lines = 15): string {
  return run('tail', ['-n', String(lines), file], { allowFail: true }).stdout;
}

async function ensureRunning(group: Managed[], p: StatePaths, out: (l: string) => void, timeoutMs: number): Promise<void> {
  const started = Date.now();
  for (const m of group) if (!isAlive(readPid(p.run, m.spec.name))) startProcess(m.spec, p);
  await Promise.all(group.map(async (m) => {
    await waitReady(m, p, timeoutMs);
    out(`  ✓ ${m.spec.name.padEnd(24)} ready (${((Date.now() - started) / 1000).toFixed(1)}s)`);
  }));
}

export async function clusterUp(o: UpOptions): Promise<void> {
  const out = o.out ?? ((l: string) => console.log(l));
  const timeoutMs = o.timeoutMs ?? 60_000;
  const p = statePaths();
  for (const d of [p.state, p.logs, p.run, p.etcd, p.nodes]) mkdirSync(d, { recursive: true });
  const nodes = Array.from({ length: o.nodes }, (_, i) => nodePlan(i + 1));

  out('Network: bridge mk8s0 10.240.0.1/24, blackhole routes for 10.244.0.0/16 and 10.96.0.0/12');
  ensureHostNetwork();
  for (const n of nodes) {
    ensureNodeNetwork(n);
    mkdirSync(join(nodeDir(p, n), 'cni', 'net.d'), { recursive: true });
    writeFileSync(join(nodeDir(p, n), 'kubeconfig'), renderKubeconfig({ server: `http://${HOST_BRIDGE_IP}:${APISERVER_PORT}`, user: `system:node:${n.name}` }));
  }
  writeFileSync(p.kubeconfig, renderKubeconfig({ server: `http://127.0.0.1:${APISERVER_PORT}` }));

  const cp = controlPlane(p);
  out('etcd (3 members):');
  await ensureRunning(cp.filter((m) => m.spec.name.startsWith('etcd-')), p, out, timeoutMs);
  const rest = cp.filter((m) => !m.spec.name.startsWith('etcd-'));
  out('Control plane:');
  await ensureRunning(rest.filter((m) => m.spec.name === 'apiserver'), p, out, timeoutMs);
  await ensureRunning(rest.filter((m) => m.spec.name !== 'apiserver'), p, out, timeoutMs);
  for (const n of nodes) {
    const comps = nodeComponents(p, n);
    if (comps.length === 0) continue;
    out(`Node ${n.name} (${n.ip}, netns ${n.netns}):`);
    // The shim first: the kubelet needs its socket.
    await ensureRunning(comps.filter((m) => m.spec.name.endsWith('cri-docker')), p, out, timeoutMs);
    await ensureRunning(comps.filter((m) => !m.spec.name.endsWith('cri-docker')), p, out, timeoutMs);
  }
  writeFileSync(join(p.state, 'cluster.json'), JSON.stringify({ nodes: nodes.map((n) => n.name) }, null, 2));
  out('');
  out('The cluster is up. Use it with:');
  out(`  export KUBECONFIG=${p.kubeconfig}`);
  out('  kubectl get nodes');
  out('  kubectl api-resources');
  out(`Logs: ${p.logs}/<component>.log    Stop: make down    Wipe data too: make clean`);
}

export async function clusterDown(o: { purge?: boolean; out?: (l: string) => void } = {}): Promise<void> {
  const out = o.out ?? ((l: string) => console.log(l));
  const p = statePaths();
  if (!existsSync(p.state)) { out('Nothing to stop'); return; }
  const running = existsSync(p.run) ? readdirSync(p.run).filter((f) => f.endsWith('.pid')).map((f) => f.slice(0, -4)) : [];
  // Nodes first (they hold pods), then the control plane, then etcd.
  const order = (n: string) => (n.startsWith('node-') ? 0 : n.startsWith('etcd-') ? 2 : n === 'dockerd' ? 3 : 1);
  for (const rank of [0, 1, 2]) {
    await Promise.all(running.filter((n) => order(n) === rank).map(async (n) => { if (await stopProcess(p.run, n)) out(`  stopped ${n}`); }));
  }
  // Pod containers of every node of this cluster (the shim labels them io.mk8s.node).
  const ids = run('docker', ['ps', '-aq', '--filter', 'label=io.mk8s.node'], { allowFail: true }).stdout.split('\n').filter(Boolean);
  if (ids.length) { run('docker', ['rm', '-f', ...ids], { allowFail: true }); out(`  removed ${ids.length} pod container(s)`); }
  for (const ns of listNodeNamespaces()) {
    // kube-proxy may have left rules in the node namespace: they go with it.
    const i = Number(/^mk8s-node-(\d+)$/.exec(ns)?.[1] ?? NaN);
    if (Number.isInteger(i)) removeNodeNetwork(nodePlan(i)); else run('ip', ['netns', 'del', ns], { allowFail: true });
  }
  removeHostNetwork();
  out('  removed node namespaces, mk8s0, blackhole routes and the forward rule');
  if (running.includes('dockerd')) { await stopProcess(p.run, 'dockerd', 20_000); out('  stopped dockerd (started by make up)'); }
  if (o.purge) { rmSync(p.state, { recursive: true, force: true }); out(`  wiped ${p.state}`); }
}

export async function clusterStatus(out: (l: string) => void = (l) => console.log(l)): Promise<boolean> {
  const p = statePaths();
  let allOk = true;
  const names = existsSync(p.run) ? readdirSync(p.run).filter((f) => f.endsWith('.pid')).map((f) => f.slice(0, -4)).sort() : [];
  if (names.length === 0) { out('No cluster is running (make up starts one)'); return false; }
  for (const n of names) {
    const alive = isAlive(readPid(p.run, n));
    allOk &&= alive;
    out(`${n.padEnd(26)} ${alive ? 'running' : 'NOT RUNNING'}`);
  }
  const api = await httpOk(`http://127.0.0.1:${APISERVER_PORT}/readyz`);
  out(`${'apiserver /readyz'.padEnd(26)} ${api ? 'ok' : 'FAILING'}`);
  return allOk && api;
}
