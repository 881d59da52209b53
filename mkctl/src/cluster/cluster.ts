/**
 * `mkctl cluster up|down|status` for the local mode: etcd ×3, the control plane on the host, and
 * N nodes, each a network namespace running its shim, kubelet and kube-proxy. Idempotent: `up`
 * starts only what is not running; `down` stops what `up` started and removes every namespace,
 * link, route, rule and pod container the cluster made.
 *
 * Secure by default (kubeadm's layout): `up` makes the PKI under .mk8s/pki (ensurePki), etcd
 * serves clients and peers over TLS with client certificates of its own CA, the apiserver serves
 * HTTPS with x509/ServiceAccount authentication, Node,RBAC authorization and Secrets encrypted
 * at rest, every component uses a kubeconfig of its own identity, and kubelets serve HTTPS to the
 * apiserver's kubelet-client certificate (authorizing others by SubjectAccessReview).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { ensurePki, pkiPaths, type PkiPaths } from '@mk8s/component-base/pki';
import { isNotFound, Nodes, type KubeObject } from '@mk8s/api';
import { createClientset } from '@mk8s/client';
import { statePaths, type StatePaths } from './paths.js';
import { APISERVER_PORT, BALANCER_NAME, CRI_DOCKER_HEALTH_PORT, ETCD_MEMBERS, HOST_BRIDGE_IP, POD_NETWORK, apiserverCertIPs, apiserverPlans, etcdArgs, etcdEndpoints, isApiserverName, nodePlan, type ApiserverPlan, type EtcdTls, type NodePlan } from './network-plan.js';
import { isAlive, readPid, run, stopProcess, type ProcessSpec } from './processes.js';
import { ensureSupervisor, readSpecs, readSupervisorStatus, setHold, stopSupervisor, superviseSpec, supervisorPaths, SUPERVISOR_NAME, describeExit } from './supervisor.js';
import { haproxyArgs, haproxyCommand, parseServerStates, renderHaproxyConfig } from './haproxy.js';
import { formatStatusTable } from './status-table.js';
import { ensureHostNetwork, ensureNodeNetwork, listNodeNamespaces, removeHostNetwork, removeNodeNetwork } from './host-network.js';
import { renderKubeconfig } from './kubeconfig.js';
import { secureApiserverFlags } from './apiserver-flags.js';
import { ensureStorageAddon } from './storage-addon.js';
import { ensureAddons } from './addons.js';
import { METRICS_SERVER_PORT, metricsServerArgs, prepareMetricsServer } from './metrics-server-addon.js';
import { healFaults } from '../chaos/node-faults.js';
import { DASHBOARD_URL, dashboardSpec, ensureDashboardAdmin, ensureDashboardCert } from './dashboard.js';

export interface UpOptions {
  nodes: number;
  /** Apiservers; more than one run behind the haproxy balancer (network-plan.ts apiserverPlans). @default 1 */
  apiservers?: number;
  out?: (line: string) => void;
  timeoutMs?: number;
}

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

/** GET over HTTPS trusting ca (PEM file), optionally with a client certificate: true on a 2xx. */
export function httpsOk(url: string, tls: { ca: string; cert?: string; key?: string }): Promise<boolean> {
  return new Promise((resolve) => {
    let opts;
    try {
      opts = { ca: readFileSync(tls.ca), ...(tls.cert ? { cert: readFileSync(tls.cert) } : {}), ...(tls.key ? { key: readFileSync(tls.key) } : {}), timeout: 2000 };
    } catch { resolve(false); return; }
    const req = httpsRequest(url, opts, (res) => { res.resume(); res.on('end', () => resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300)); });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function etcdTls(pki: PkiPaths): EtcdTls {
  return { ca: pki.etcd.ca.cert, cert: pki.etcd.server.cert, key: pki.etcd.server.key, peerCert: pki.etcd.peer.cert, peerKey: pki.etcd.peer.key };
}

/**
 * The EncryptionConfiguration for Secrets (AES-GCM, one random 256-bit key), written once: the key
 * must outlive restarts or stored Secrets become unreadable.
 */
export function ensureEncryptionConfig(file: string): void {
  if (existsSync(file)) return;
  const text = [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: EncryptionConfiguration',
    'resources:',
    '  - resources: [secrets]',
    '    providers:',
    '      - aesgcm:',
    '          keys:',
    `            - name: key1`,
    `              secret: ${randomBytes(32).toString('base64')}`,
    '      - identity: {}',
    '',
  ].join('\n');
  writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

function script(p: StatePaths, pkg: string): string | undefined {
  const f = join(p.root, pkg, 'dist', 'main.js');
  return existsSync(f) ? f : undefined;
}

/** Where the balancer's generated config and admin socket live. */
export function balancerPaths(p: StatePaths): { config: string; socket: string } {
  return { config: join(p.state, 'haproxy.cfg'), socket: join(p.run, 'haproxy.sock') };
}

/** Writes haproxy.cfg for plans (the balancer listens where the single apiserver would). */
function writeBalancerConfig(p: StatePaths, pki: PkiPaths, plans: ApiserverPlan[]): void {
  const b = balancerPaths(p);
  const text = renderHaproxyConfig({
    binds: [`127.0.0.1:${APISERVER_PORT}`, `${HOST_BRIDGE_IP}:${APISERVER_PORT}`],
    servers: plans.map((a) => ({ name: a.name, address: a.ip, port: a.port })), caFile: pki.ca.cert, statsSocket: b.socket,
  });
  writeFileSync(`${b.config}.tmp`, text);
  renameSync(`${b.config}.tmp`, b.config);
}

/**
 * Stops (hold, then forget) the supervised apiservers and balancer that plans no longer has: going
 * from one apiserver to three frees 127.0.0.1:6443 for the balancer, and back.
 */
async function retireStaleApiservers(p: StatePaths, plans: ApiserverPlan[], out: (l: string) => void): Promise<void> {
  const sp = supervisorPaths(p);
  const want = new Set([...plans.map((a) => a.name), ...(plans.length > 1 ? [BALANCER_NAME] : [])]);
  const stale = readSpecs(sp).map((x) => x.name).filter((n) => (isApiserverName(n) || n === BALANCER_NAME) && !want.has(n));
  if (stale.length === 0) return;
  await setHold(sp, stale, true);
  for (const n of stale) {
    rmSync(join(sp.specs, `${n}.json`), { force: true });
    await stopProcess(p.run, n);
    out(`  stopped ${n} (not in this cluster's ${plans.length} apiserver(s))`);
  }
}

/** The local nodes (node-<i>) beyond this cluster's count, from the supervisor's specs and the node namespaces. Pure but for reads. */
export function staleNodeIndexes(specNames: readonly string[], namespaces: readonly string[], nodes: number): number[] {
  const idx = new Set<number>();
  for (const n of specNames) { const m = /^node-(\d+)-/.exec(n); if (m) idx.add(Number(m[1])); }
  for (const ns of namespaces) { const m = /^mk8s-node-(\d+)$/.exec(ns); if (m) idx.add(Number(m[1])); }
  return [...idx].filter((i) => i > nodes).sort((a, b) => a - b);
}

/**
 * Going from more nodes to fewer (`up --nodes 2` after `--nodes 3`) takes the extra nodes out as
 * `kubectl drain` + `kubectl delete node` would leave them: processes stopped, pod containers and
 * the namespace removed. Their Node objects are deleted once the apiserver is up (deleteStaleNodes),
 * so nothing is scheduled to them and the pod GC collects their pods.
 */
async function retireStaleNodes(p: StatePaths, nodes: number, out: (l: string) => void): Promise<string[]> {
  const sp = supervisorPaths(p);
  const specs = readSpecs(sp).map((x) => x.name);
  const stale = staleNodeIndexes(specs, listNodeNamespaces(), nodes);
  for (const i of stale) {
    const plan = nodePlan(i);
    const mine = specs.filter((n) => n.startsWith(`${plan.name}-`));
    if (mine.length) await setHold(sp, mine, true);
    for (const n of mine) {
      rmSync(join(sp.specs, `${n}.json`), { force: true });
      await stopProcess(p.run, n);
    }
    const ids = run('docker', ['ps', '-aq', '--filter', `label=io.mk8s.node=${plan.name}`], { allowFail: true }).stdout.split('\n').filter(Boolean);
    if (ids.length) run('docker', ['rm', '-f', ...ids], { allowFail: true });
    removeNodeNetwork(plan);
    out(`  retired ${plan.name} (not in this cluster's ${nodes} node(s))`);
  }
  return stale.map((i) => nodePlan(i).name);
}

/** Deletes the Node objects of retired local nodes (only those at their planned address: a joined machine of the same name is left alone). */
async function deleteStaleNodes(p: StatePaths, names: readonly string[], out: (l: string) => void): Promise<void> {
  if (names.length === 0) return;
  const client = createClientset({ kubeconfig: p.kubeconfig, userAgent: 'mkctl' });
  try {
    for (const name of names) {
      const ip = nodePlan(Number(name.slice('node-'.length))).ip;
      try {
        const n = await client.resource<KubeObject & { status?: { addresses?: { type: string; address: string }[] } }>(Nodes).get(name);
        if (!(n.status?.addresses ?? []).some((a) => a.type === 'InternalIP' && a.address === ip)) continue;
        await client.resource(Nodes).delete(name);
        out(`  deleted Node ${name}`);
      } catch (err) { if (!isNotFound(err)) out(`  ✗ could not delete Node ${name}: ${(err as Error).message}`); }
    }
  } finally { await client.close(); }
}

function controlPlane(p: StatePaths, pki: PkiPaths, plans: ApiserverPlan[]): Managed[] {
  const out: Managed[] = [];
  for (const m of ETCD_MEMBERS) {
    const dataDir = join(p.etcd, m.name);
    const state = existsSync(join(dataDir, 'member')) ? 'existing' : 'new';
    out.push({
      spec: { name: m.name, command: 'etcd', args: etcdArgs(m, dataDir, state, etcdTls(pki)) },
      ready: () => httpsOk(`https://127.0.0.1:${m.clientPort}/health`, { ca: pki.etcd.ca.cert, cert: pki.apiserverEtcdClient.cert, key: pki.apiserverEtcdClient.key }),
    });
  }
  const apiserver = script(p, 'apiserver');
  for (const a of apiserver ? plans : []) {
    out.push({
      spec: { name: a.name, command: process.execPath, args: [apiserver!, ...secureApiserverFlags(pki, {
        etcdServers: etcdEndpoints(), bindAddress: a.bindAddress, port: a.port, encryptionConfig: p.encryptionConfig,
        ...(plans.length > 1 ? { advertiseAddress: a.ip } : {}),
        // One audit log per apiserver: two processes must not rotate one file.
        auditPolicy: join(p.root, 'apiserver', 'audit-policy.default.yaml'), auditLog: join(p.logs, plans.length > 1 ? `audit-${a.name}.log` : 'audit.log'),
      })] },
      // /readyz is one of the paths anonymous requests may read.
      ready: () => httpsOk(`https://${a.readyHost}:${a.port}/readyz`, { ca: pki.ca.cert }),
    });
  }
  if (apiserver && plans.length > 1) {
    out.push({
      spec: { name: BALANCER_NAME, command: 'haproxy', args: haproxyArgs(balancerPaths(p).config) },
      // Ready once it forwards to a ready apiserver.
      ready: () => httpsOk(`https://127.0.0.1:${APISERVER_PORT}/readyz`, { ca: pki.ca.cert }),
    });
  }
  const hostComponent = (name: string, port: number) => {
    const s = script(p, name);
    // The controller-manager publishes the cluster CA to every namespace (kube-root-ca.crt, read by the token volume)
    // and signs approved CertificateSigningRequests with it (csrsigning), as kubeadm configures it.
    const extra = name === 'controller-manager'
      ? ['--root-ca-file', pki.ca.cert, '--cluster-signing-cert-file', pki.ca.cert, '--cluster-signing-key-file', pki.ca.key] : [];
    if (s) out.push({ spec: { name, command: process.execPath, args: [s, '--kubeconfig', join(p.kubeconfigs, `${name}.kubeconfig`), '--health-port', String(port), ...extra] }, ready: () => httpOk(`http://127.0.0.1:${port}/healthz`) });
  };
  hostComponent('controller-manager', 10257);
  hostComponent('scheduler', 10259);
  return out;
}

/** Writes the admin's and every component's kubeconfig (each its own certificate). */
function writeKubeconfigs(p: StatePaths, pki: PkiPaths, nodes: NodePlan[]): void {
  mkdirSync(p.kubeconfigs, { recursive: true, mode: 0o700 });
  const host = `https://127.0.0.1:${APISERVER_PORT}`;
  const write = (file: string, text: string) => { writeFileSync(`${file}.tmp`, text, { mode: 0o600 }); renameSync(`${file}.tmp`, file); };
  write(p.kubeconfig, renderKubeconfig({ server: host, user: 'kubernetes-admin', tls: { ca: pki.ca.cert, cert: pki.admin.cert, key: pki.admin.key } }));
  write(join(p.kubeconfigs, 'controller-manager.kubeconfig'), renderKubeconfig({ server: host, user: 'system:kube-controller-manager', tls: { ca: pki.ca.cert, ...pki.controllerManager } }));
  write(join(p.kubeconfigs, 'scheduler.kubeconfig'), renderKubeconfig({ server: host, user: 'system:kube-scheduler', tls: { ca: pki.ca.cert, ...pki.scheduler } }));
  // Node components reach the apiserver over the node network.
  const fromNode = `https://${HOST_BRIDGE_IP}:${APISERVER_PORT}`;
  for (const n of nodes) {
    const k = pki.kubelets[n.name]!;
    write(join(nodeDir(p, n), 'kubeconfig'), renderKubeconfig({ server: fromNode, user: `system:node:${n.name}`, tls: { ca: pki.ca.cert, ...k.client } }));
    write(join(nodeDir(p, n), 'kube-proxy.kubeconfig'), renderKubeconfig({ server: fromNode, user: 'system:kube-proxy', tls: { ca: pki.ca.cert, ...pki.kubeProxy } }));
  }
}

function nodeComponents(p: StatePaths, pki: PkiPaths, n: NodePlan): Managed[] {
  const dir = nodeDir(p, n);
  const kubeconfig = join(dir, 'kubeconfig');
  const serving = pki.kubelets[n.name]!.serving;
  const socket = join(dir, 'cri.sock');
  const out: Managed[] = [];
  const shim = script(p, 'cri-docker');
  if (shim) out.push({
    spec: { name: `${n.name}-cri-docker`, netns: n.netns, command: process.execPath, args: [shim, '--socket', socket, '--node-name', n.name, '--cni-conf-dir', join(dir, 'cni', 'net.d'), '--cni-bin-dir', `${join(p.root, 'cni', 'bin')}:/usr/lib/cni`,
      // /healthz and /metrics (process and runtime metrics) on the node network, as the kubelet's and kube-proxy's.
      '--health-port', String(CRI_DOCKER_HEALTH_PORT), '--health-host', '0.0.0.0'] },
    ready: async () => existsSync(socket),
  });
  const kubelet = script(p, 'kubelet');
  if (kubelet) out.push({
    spec: { name: `${n.name}-kubelet`, netns: n.netns, command: process.execPath, args: [kubelet, '--kubeconfig', kubeconfig, '--node-name', n.name, '--node-ip', n.ip, '--container-runtime-endpoint', `unix://${socket}`, '--root-dir', join(dir, 'kubelet'), '--health-port', '10248', '--health-bind-address', '0.0.0.0',
      '--tls-cert-file', serving.cert, '--tls-private-key-file', serving.key, '--client-ca-file', pki.ca.cert, '--authorization-mode', 'Webhook', '--anonymous-auth', 'false'] },
    ready: () => httpOk(`http://${n.ip}:10248/healthz`),
  });
  const proxy = script(p, 'kube-proxy');
  if (proxy) out.push({
    spec: { name: `${n.name}-kube-proxy`, netns: n.netns, command: process.execPath, args: [proxy, '--kubeconfig', join(dir, 'kube-proxy.kubeconfig'), '--node-name', n.name, '--health-port', '10256', '--health-bind-address', '0.0.0.0',
      '--cluster-cidr', POD_NETWORK, '--min-sync-period', '1s',
      // kube-proxy also runs the node route agent (host-gw routes, the mk8s-bridge CNI conflist): see kube-proxy/README.md.
      '--route-agent', '--cni-conf-dir', join(dir, 'cni', 'net.d'), '--cni-data-dir', join(dir, 'cni', 'ipam')] },
    ready: () => httpOk(`http://${n.ip}:10256/healthz`),
  });
  return out;
}

/**
 * Waits until m answers its health check. A process that crash-loops meanwhile (a third exit
 * since `since`) fails at once: the supervisor keeps restarting it, but a cluster that does not
 * come up should say why. One or two exits are left to the supervisor (a component that gave up
 * on a slow dependency).
 */
async function waitReady(m: Managed, p: StatePaths, timeoutMs: number, since: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const log = join(p.logs, m.spec.name + '.log');
  const restarts0 = readSupervisorStatus(supervisorPaths(p))?.processes[m.spec.name]?.restarts ?? 0;
  for (;;) {
    if (isAlive(readPid(p.run, m.spec.name)) && await m.ready()) return;
    const st = readSupervisorStatus(supervisorPaths(p))?.processes[m.spec.name];
    const exit = st?.lastExit;
    const exits = (st?.restarts ?? 0) - restarts0 + (st?.state === 'backoff' ? 1 : 0);
    if (exit && Date.parse(exit.at) >= since && exits >= 3) throw new Error(`${m.spec.name} exited (${describeExit(exit)}); see ${log}\n${tail(log)}`);
    if (Date.now() > deadline) throw new Error(`${m.spec.name} not ready after ${timeoutMs / 1000}s; see ${log}\n${tail(log)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function tail(file: string, lines = 15): string {
  return run('tail', ['-n', String(lines), file], { allowFail: true }).stdout;
}

/** Hands the group to the supervisor (which starts what does not run) and waits until each is ready. */
async function ensureRunning(group: Managed[], p: StatePaths, out: (l: string) => void, timeoutMs: number): Promise<void> {
  const started = Date.now();
  for (const m of group) superviseSpec(supervisorPaths(p), m.spec);
  await Promise.all(group.map(async (m) => {
    await waitReady(m, p, timeoutMs, started);
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
  const plans = apiserverPlans(o.apiservers ?? 1);
  // N > 1: each apiserver's own address on mk8s0 (the host side of the node network).
  ensureHostNetwork(plans.length > 1 ? plans.map((a) => a.ip) : []);
  for (const n of nodes) {
    ensureNodeNetwork(n);
    mkdirSync(join(nodeDir(p, n), 'cni', 'net.d'), { recursive: true });
  }
  out(`PKI: ${p.pki} (cluster CA, etcd CA, one certificate per identity); Secrets encrypted at rest`);
  const pki = await ensurePki(p.pki, {
    nodes: nodes.map((n) => n.name),
    nodeIPs: Object.fromEntries(nodes.map((n) => [n.name, [n.ip]])),
    // Every address an apiserver may serve on, whatever N: the certificate does not change with it.
    apiserverIPs: apiserverCertIPs(),
  });
  ensureEncryptionConfig(p.encryptionConfig);
  writeKubeconfigs(p, pki, nodes);
  migratePlainEtcd(p, out);

  if (plans.length > 1) writeBalancerConfig(p, pki, plans);
  const cp = controlPlane(p, pki, plans);
  // Every process below runs under the supervisor (restarted with back-off when it exits).
  const supervisor = await ensureSupervisor(supervisorPaths(p));
  out(`Supervisor: pid ${supervisor} (restarts what exits: 1s doubling to 30s; mkctl cluster status)`);
  const retired = await retireStaleNodes(p, o.nodes, out);
  out('etcd (3 members):');
  await ensureRunning(cp.filter((m) => m.spec.name.startsWith('etcd-')), p, out, timeoutMs);
  const rest = cp.filter((m) => !m.spec.name.startsWith('etcd-'));
  out(plans.length > 1 ? `Control plane (${plans.length} apiservers behind ${BALANCER_NAME} on 127.0.0.1:${APISERVER_PORT} and ${HOST_BRIDGE_IP}:${APISERVER_PORT}):` : 'Control plane:');
  await retireStaleApiservers(p, plans, out);
  await ensureRunning(rest.filter((m) => isApiserverName(m.spec.name)), p, out, timeoutMs);
  await ensureRunning(rest.filter((m) => m.spec.name === BALANCER_NAME), p, out, timeoutMs);
  await ensureRunning(rest.filter((m) => !isApiserverName(m.spec.name) && m.spec.name !== BALANCER_NAME), p, out, timeoutMs);
  await deleteStaleNodes(p, retired, out);
  for (const n of nodes) {
    const comps = nodeComponents(p, pki, n);
    if (comps.length === 0) continue;
    out(`Node ${n.name} (${n.ip}, netns ${n.netns}):`);
    // The shim first: the kubelet needs its socket.
    await ensureRunning(comps.filter((m) => m.spec.name.endsWith('cri-docker')), p, out, timeoutMs);
    await ensureRunning(comps.filter((m) => !m.spec.name.endsWith('cri-docker')), p, out, timeoutMs);
  }
  // Volumes of the default StorageClass live under each node's data dir.
  await ensureStorageAddon({ kubeconfig: p.kubeconfig, nodeDirs: Object.fromEntries(nodes.map((n) => [n.name, join(nodeDir(p, n), 'local-path')])) });
  out('Storage: StorageClass standard (default, mk8s.io/local-path, WaitForFirstConsumer)');
  if (nodes.length > 0 && script(p, 'kubelet')) {
    out('Add-ons:');
    await ensureAddons({ root: p.root, kubeconfig: p.kubeconfig, out, timeoutMs });
    // metrics-server runs on the host, as the control plane does (metrics-server/README.md says why).
    const ms = script(p, 'metrics-server');
    // An add-on that fails does not fail the cluster: only `kubectl top` (and the HPA) lack figures.
    if (ms) {
      try {
        const f = await prepareMetricsServer({ root: p.root, paths: p, pki, adminKubeconfig: p.kubeconfig });
        await ensureRunning([{
          spec: { name: 'metrics-server', command: process.execPath, args: [ms, ...metricsServerArgs(pki, f)] },
          ready: () => httpsOk(`https://${HOST_BRIDGE_IP}:${METRICS_SERVER_PORT}/livez`, { ca: pki.ca.cert }),
        }], p, out, timeoutMs);
      } catch (err) {
        out(`  ✗ metrics-server not running: ${err instanceof Error ? err.message : String(err)} (kubectl top has no figures; ${join(p.logs, 'metrics-server.log')})`);
      }
    }
  }
  // The web dashboard (dashboard.ts): it has no rights of its own; mkctl dashboard --url logs the admin in.
  const dashboard = dashboardSpec(p, pki, await ensureDashboardCert(pki), `https://127.0.0.1:${APISERVER_PORT}`);
  if (dashboard) {
    out('Dashboard:');
    // Not fatal: a cluster whose dashboard does not start is still a cluster (the supervisor keeps trying).
    await ensureDashboardAdmin(p.kubeconfig)
      .then(() => ensureRunning([{ spec: dashboard, ready: () => httpsOk(`${DASHBOARD_URL}/healthz`, { ca: pki.ca.cert }) }], p, out, timeoutMs))
      .catch((err: unknown) => out(`  ✗ dashboard: ${(err as Error).message}`));
  }
  writeFileSync(join(p.state, 'cluster.json'), JSON.stringify({ nodes: nodes.map((n) => n.name), apiservers: plans.map((a) => a.name) }, null, 2));
  out('');
  out('The cluster is up. Use it with:');
  out(`  export KUBECONFIG=${p.kubeconfig}`);
  out('  kubectl get nodes');
  out('  kubectl api-resources');
  out('  kubectl top nodes        (metrics.k8s.io, through metrics-server: figures after ~15-30 s)');
  if (dashboard) out(`Dashboard: ${DASHBOARD_URL}/   log in: mkctl dashboard --url [KIND/NAME]`);
  out(`Logs: ${p.logs}/<component>.log    Stop: make down    Wipe data too: make clean`);
}

/** The files `nodeCredentials` writes, by role; `mkctl node join --credentials <dir>` reads them. */
export const NODE_CREDENTIAL_FILES = {
  ca: 'ca.crt', cert: 'node.crt', key: 'node.key', servingCert: 'kubelet-serving.crt', servingKey: 'kubelet-serving.key',
  proxyCert: 'kube-proxy.crt', proxyKey: 'kube-proxy.key',
} as const;

/** The PKI files a node's credentials directory holds: [source, NODE_CREDENTIAL_FILES name, mode]. */
export function nodeCredentialCopies(pki: PkiPaths, nodeName: string): [string, string, number][] {
  const k = pki.kubelets[nodeName]!;
  const f = NODE_CREDENTIAL_FILES;
  return [
    [pki.ca.cert, f.ca, 0o644], [k.client.cert, f.cert, 0o644], [k.client.key, f.key, 0o600],
    [k.serving.cert, f.servingCert, 0o644], [k.serving.key, f.servingKey, 0o600], [pki.kubeProxy.cert, f.proxyCert, 0o644], [pki.kubeProxy.key, f.proxyKey, 0o600],
  ];
}

/**
 * What a machine needs to join the local cluster as node `name` (what `kubeadm join` gets through
 * TLS bootstrapping, issued here directly from the cluster CA): the CA, the kubelet's client
 * certificate (system:node:<name>) and serving certificate (for ip), and kube-proxy's.
 */
export async function nodeCredentials(o: { nodeName: string; nodeIp: string; outDir: string; out?: (l: string) => void }): Promise<void> {
  const p = statePaths();
  if (!existsSync(pkiPaths(p.pki, []).ca.cert)) throw new Error(`no cluster PKI at ${p.pki}: run mkctl cluster up first`);
  const pki = await ensurePki(p.pki, { nodes: [o.nodeName], nodeIPs: { [o.nodeName]: [o.nodeIp] } });
  mkdirSync(o.outDir, { recursive: true, mode: 0o700 });
  for (const [from, to, mode] of nodeCredentialCopies(pki, o.nodeName)) writeFileSync(join(o.outDir, to), readFileSync(from), { mode });
  (o.out ?? ((l: string) => console.log(l)))(`Credentials of node ${o.nodeName} (${o.nodeIp}) in ${o.outDir}: mkctl node join --credentials ${o.outDir} ...`);
}

/**
 * etcd data of a cluster from before TLS: its members know each other by http:// peer URLs, which a
 * TLS member cannot reach. Such data is set aside (not deleted) and the cluster starts afresh.
 */
function migratePlainEtcd(p: StatePaths, out: (l: string) => void): void {
  const marker = join(p.etcd, 'tls');
  if (existsSync(marker)) return;
  const old = ETCD_MEMBERS.filter((m) => existsSync(join(p.etcd, m.name, 'member')));
  if (old.length > 0) {
    if (ETCD_MEMBERS.some((m) => isAlive(readPid(p.run, m.name)))) {
      throw new Error('a cluster started before TLS is running: stop it first (make down), then make up');
    }
    const aside = `${p.etcd}.plain-${Date.now()}`;
    mkdirSync(aside, { recursive: true });
    for (const m of old) renameSync(join(p.etcd, m.name), join(aside, m.name));
    out(`  etcd data of a plain-HTTP cluster moved to ${aside}: the cluster starts empty`);
  }
  mkdirSync(p.etcd, { recursive: true });
  writeFileSync(marker, 'etcd members here use TLS peer URLs\n');
}

export async function clusterDown(o: { purge?: boolean; out?: (l: string) => void } = {}): Promise<void> {
  const out = o.out ?? ((l: string) => console.log(l));
  const p = statePaths();
  if (!existsSync(p.state)) { out('Nothing to stop'); return; }
  // The supervisor first, so that nothing is restarted while the rest stops.
  const sp = supervisorPaths(p);
  if (await stopSupervisor(sp)) out(`  stopped ${SUPERVISOR_NAME}`);
  // Chaos node faults in force: stopped processes continued (so they can stop), partitions undone.
  await healFaults(p, { shuttingDown: true, out: (l) => out(`  ${l}`) });
  rmSync(sp.specs, { recursive: true, force: true });
  const running = existsSync(p.run) ? readdirSync(p.run).filter((f) => f.endsWith('.pid')).map((f) => f.slice(0, -4)) : [];
  // Nodes first (they hold pods), then the control plane, then etcd.
  const order = (n: string) => (n.startsWith('node-') ? 0 : n.startsWith('etcd-') ? 2 : n === 'dockerd' ? 3 : 1);
  for (const rank of [0, 1, 2]) {
    await Promise.all(running.filter((n) => order(n) === rank).map(async (n) => { if (await stopProcess(p.run, n)) out(`  stopped ${n}`); }));
  }
  rmSync(balancerPaths(p).socket, { force: true });
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
  const sp = supervisorPaths(p);
  const sup = readSupervisorStatus(sp);
  const pidNames = existsSync(p.run) ? readdirSync(p.run).filter((f) => f.endsWith('.pid')).map((f) => f.slice(0, -4)) : [];
  const names = [...new Set([...pidNames, ...Object.keys(sup?.processes ?? {})])].filter((n) => n !== SUPERVISOR_NAME).sort();
  if (names.length === 0) { out('No cluster is running (make up starts one)'); return false; }
  const supPid = readPid(p.run, SUPERVISOR_NAME);
  const supAlive = isAlive(supPid);
  out(`supervisor: ${supAlive ? `running, pid ${supPid}` : 'NOT RUNNING (nothing is restarted; mkctl cluster up starts it and it adopts the running processes)'}`);
  const rows = names.map((n) => {
    const pid = readPid(p.run, n);
    const status = sup?.processes[n];
    return { name: n, alive: isAlive(pid), ...(pid ? { pid } : {}), ...(status ? { status } : {}) };
  });
  for (const l of formatStatusTable(rows, Date.now())) out(l);
  const ca = pkiPaths(p.pki, []).ca.cert;
  const api = await httpsOk(`https://127.0.0.1:${APISERVER_PORT}/readyz`, { ca });
  const apiNames = names.filter(isApiserverName);
  if (apiNames.length > 1 || names.includes(BALANCER_NAME)) {
    // Each apiserver on its own address, then the balancer as clients see it (and as haproxy sees the apiservers).
    const plans = new Map(apiserverPlans(Math.max(2, apiNames.length)).map((a) => [a.name, a]));
    const states = parseServerStates(await haproxyCommand(balancerPaths(p).socket, 'show stat'));
    for (const n of apiNames) {
      const a = plans.get(n);
      const ok = a ? await httpsOk(`https://${a.readyHost}:${a.port}/readyz`, { ca }) : false;
      out(`${n} ${a ? `${a.ip}:${a.port}` : ''} /readyz: ${ok ? 'ok' : 'FAILING'}; in ${BALANCER_NAME}: ${states[n] ?? 'unknown'}`);
    }
    out(`${BALANCER_NAME} (balancer) 127.0.0.1:${APISERVER_PORT}, ${HOST_BRIDGE_IP}:${APISERVER_PORT} /readyz: ${api ? 'ok' : 'FAILING'}`);
  } else {
    out(`apiserver /readyz: ${api ? 'ok' : 'FAILING'}`);
  }
  return supAlive && rows.every((r) => r.alive) && api;
}
