/**
 * `mkctl node join|leave`: the node components (cri-docker shim, kubelet, kube-proxy with the route
 * agent) on a machine that has Docker, pointed at an apiserver elsewhere: what `kubeadm join` is to
 * Kubernetes. The components run in the caller's network namespace (a VM, a compose node container,
 * or `ip netns exec <ns> mkctl node join ...`), so --node-ip must be an address of that namespace.
 *
 * Detached mode (default) starts them as background processes with pid files and logs under the
 * state dir and returns once each is healthy; `--foreground` supervises them in this process (what
 * a node container's entrypoint wants: logs on stdout, exit when one of them exits).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { repoRoot } from '../cluster/paths.js';
import { isAlive, readPid, run, startProcess, stopProcess, type ProcessSpec } from '../cluster/processes.js';
import { NODE_CREDENTIAL_FILES, httpsOk } from '../cluster/cluster.js';
import { CRI_DOCKER_HEALTH_PORT } from '../cluster/network-plan.js';
import { createClientset } from '@mk8s/client';
import { Nodes, isNotFound } from '@mk8s/api';

/** Where a joined node keeps its state when --state-dir is not given. */
export const DEFAULT_STATE_ROOT = '/var/lib/mk8s-node';
/** Pod network the route agent and kube-proxy assume (DESIGN.md network plan). */
export const DEFAULT_CLUSTER_CIDR = '10.244.0.0/16';

export interface JoinOptions {
  /** The apiserver URL as this machine reaches it, e.g. http://10.240.0.1:6443. */
  server: string;
  /** Bearer token written into the node's kubeconfig (a --token-auth-file token of the apiserver). */
  token?: string;
  /**
   * A directory from `mkctl cluster credentials` (NODE_CREDENTIAL_FILES): the cluster CA, the
   * node's client and serving certificates and kube-proxy's. With it the components speak TLS
   * with their own identities and the kubelet serves HTTPS. @default none: plain HTTP
   */
  credentials?: string;
  nodeName: string;
  /** An address of this machine (namespace) the control plane reaches it at: kubelet API, health. */
  nodeIp: string;
  /** @default /var/lib/mk8s-node/<nodeName> */
  stateDir?: string;
  /** @default 10.244.0.0/16 */
  clusterCidr?: string;
  /** The repository whose built component binaries run. @default the one this mkctl belongs to */
  root?: string;
  /** Supervise the components in this process instead of detaching. */
  foreground?: boolean;
  /** How long to wait for the apiserver and for each component. @default 60000 */
  timeoutMs?: number;
  out?: (line: string) => void;
}

export interface NodePaths { state: string; run: string; logs: string; kubeconfig: string; proxyKubeconfig: string; socket: string; cniConf: string; cniData: string; kubeletRoot: string; meta: string }

export function nodePaths(stateDir: string): NodePaths {
  return {
    state: stateDir, run: join(stateDir, 'run'), logs: join(stateDir, 'logs'), kubeconfig: join(stateDir, 'kubeconfig'), proxyKubeconfig: join(stateDir, 'kube-proxy.kubeconfig'),
    socket: join(stateDir, 'cri.sock'), cniConf: join(stateDir, 'cni', 'net.d'), cniData: join(stateDir, 'cni', 'ipam'),
    kubeletRoot: join(stateDir, 'kubelet'), meta: join(stateDir, 'node.json'),
  };
}

export const stateDirFor = (nodeName: string, stateDir?: string): string => stateDir ?? join(DEFAULT_STATE_ROOT, nodeName);

/**
 * The kubeconfig a joined node's components use: one cluster, the node's user with the bearer token
 * or client certificate (PEM contents, embedded), trusting ca.
 */
export function renderNodeKubeconfig(o: { server: string; nodeName: string; token?: string; user?: string; ca?: string; cert?: string; key?: string }): string {
  const user = o.user ?? `system:node:${o.nodeName}`;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return dump({
    apiVersion: 'v1', kind: 'Config', preferences: {},
    clusters: [{ name: 'mk8s', cluster: { server: o.server, ...(o.ca ? { 'certificate-authority-data': b64(o.ca) } : {}) } }],
    users: [{ name: user, user: {
      ...(o.token ? { token: o.token } : {}),
      ...(o.cert ? { 'client-certificate-data': b64(o.cert) } : {}), ...(o.key ? { 'client-key-data': b64(o.key) } : {}),
    } }],
    contexts: [{ name: 'mk8s', context: { cluster: 'mk8s', user } }],
    'current-context': 'mk8s',
  });
}

interface Component { spec: ProcessSpec; ready: () => Promise<boolean> }

/** The three node processes, with the same flags `mkctl cluster up` gives a local node. */
export function nodeComponentSpecs(o: { root: string; nodeName: string; nodeIp: string; clusterCidr: string; paths: NodePaths; credentials?: string }): ProcessSpec[] {
  const { root, nodeName, nodeIp, paths: p } = o;
  const bin = (pkg: string) => join(root, pkg, 'dist', 'main.js');
  const f = NODE_CREDENTIAL_FILES;
  const kubeletTls = o.credentials
    ? ['--tls-cert-file', join(o.credentials, f.servingCert), '--tls-private-key-file', join(o.credentials, f.servingKey), '--client-ca-file', join(o.credentials, f.ca),
      '--authorization-mode', 'Webhook', '--anonymous-auth', 'false']
    : [];
  return [
    { name: 'cri-docker', command: process.execPath, args: [bin('cri-docker'), '--socket', p.socket, '--node-name', nodeName, '--cni-conf-dir', p.cniConf, '--cni-bin-dir', `${join(root, 'cni', 'bin')}:/usr/lib/cni`,
      '--health-port', String(CRI_DOCKER_HEALTH_PORT), '--health-host', '0.0.0.0'] },
    { name: 'kubelet', command: process.execPath, args: [bin('kubelet'), '--kubeconfig', p.kubeconfig, '--node-name', nodeName, '--node-ip', nodeIp, '--container-runtime-endpoint', `unix://${p.socket}`, '--root-dir', p.kubeletRoot, '--health-port', '10248', '--health-bind-address', '0.0.0.0', ...kubeletTls] },
    { name: 'kube-proxy', command: process.execPath, args: [bin('kube-proxy'), '--kubeconfig', o.credentials ? p.proxyKubeconfig : p.kubeconfig, '--node-name', nodeName, '--health-port', '10256', '--health-bind-address', '0.0.0.0',
      '--cluster-cidr', o.clusterCidr, '--min-sync-period', '1s', '--route-agent', '--cni-conf-dir', p.cniConf, '--cni-data-dir', p.cniData] },
  ];
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok;
  } catch { return false; }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, cond: () => Promise<boolean>, timeoutMs: number, failed?: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    const why = failed?.();
    if (why) throw new Error(why);
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs / 1000}s`);
    await sleep(250);
  }
}

function readyCheck(name: string, o: { nodeIp: string; paths: NodePaths }): () => Promise<boolean> {
  if (name === 'cri-docker') return async () => existsSync(o.paths.socket);
  if (name === 'kubelet') return () => httpOk(`http://${o.nodeIp}:10248/healthz`);
  return () => httpOk(`http://${o.nodeIp}:10256/healthz`);
}

function tail(file: string, lines = 15): string {
  return run('tail', ['-n', String(lines), file], { allowFail: true }).stdout;
}

/** Starts the node components (idempotent: running ones are left alone). Resolves once all are healthy. */
export async function nodeJoin(o: JoinOptions): Promise<void> {
  const out = o.out ?? ((l: string) => console.log(l));
  const timeoutMs = o.timeoutMs ?? 60_000;
  const root = o.root ?? repoRoot();
  const clusterCidr = o.clusterCidr ?? DEFAULT_CLUSTER_CIDR;
  const p = nodePaths(stateDirFor(o.nodeName, o.stateDir));
  const server = o.server.replace(/\/+$/, '');
  for (const pkg of ['cri-docker', 'kubelet', 'kube-proxy']) {
    if (!existsSync(join(root, pkg, 'dist', 'main.js'))) throw new Error(`${join(root, pkg, 'dist', 'main.js')} is missing: run make build first`);
  }
  for (const d of [p.state, p.run, p.logs, p.cniConf, p.cniData, p.kubeletRoot]) mkdirSync(d, { recursive: true });
  out(`Joining ${o.nodeName} (${o.nodeIp}) to ${server}; state in ${p.state}`);
  const cred = o.credentials;
  const f = NODE_CREDENTIAL_FILES;
  const readCred = (name: string) => readFileSync(join(cred!, name), 'utf8');
  if (cred) for (const name of Object.values(f)) if (!existsSync(join(cred, name))) throw new Error(`${join(cred, name)} is missing: make the directory with mkctl cluster credentials`);
  const reachable = cred ? () => httpsOk(`${server}/readyz`, { ca: join(cred, f.ca) }) : () => httpOk(`${server}/readyz`);
  await waitFor(`the API server at ${server}`, reachable, timeoutMs).catch(() => {
    throw new Error(`cannot reach the API server at ${server} from this machine: is the control plane up, and is --server an address this machine (namespace) can route to?`);
  });
  const tls = cred ? { ca: readCred(f.ca), cert: readCred(f.cert), key: readCred(f.key) } : {};
  writeFileSync(p.kubeconfig, renderNodeKubeconfig({ server, nodeName: o.nodeName, ...(o.token ? { token: o.token } : {}), ...tls }), { mode: 0o600 });
  if (cred) writeFileSync(p.proxyKubeconfig, renderNodeKubeconfig({ server, nodeName: o.nodeName, user: 'system:kube-proxy', ca: readCred(f.ca), cert: readCred(f.proxyCert), key: readCred(f.proxyKey) }), { mode: 0o600 });
  writeFileSync(p.meta, JSON.stringify({ nodeName: o.nodeName, nodeIp: o.nodeIp, server, root }, null, 2) + '\n');
  const comps: Component[] = nodeComponentSpecs({ root, nodeName: o.nodeName, nodeIp: o.nodeIp, clusterCidr, paths: p, ...(cred ? { credentials: cred } : {}) })
    .map((spec) => ({ spec, ready: readyCheck(spec.name, { nodeIp: o.nodeIp, paths: p }) }));
  if (o.foreground) return supervise(comps, p, out, timeoutMs);

  const started = Date.now();
  // The shim first: the kubelet needs its socket.
  for (const group of [comps.slice(0, 1), comps.slice(1)]) {
    for (const c of group) if (!isAlive(readPid(p.run, c.spec.name))) startProcess(c.spec, p);
    await Promise.all(group.map(async (c) => {
      const log = join(p.logs, `${c.spec.name}.log`);
      await waitFor(c.spec.name, c.ready, timeoutMs, () => (isAlive(readPid(p.run, c.spec.name)) ? undefined : `${c.spec.name} exited; see ${log}\n${tail(log)}`))
        .catch((err: unknown) => { throw err instanceof Error && err.message.includes('exited') ? err : new Error(`${c.spec.name} not ready after ${timeoutMs / 1000}s; see ${log}\n${tail(log)}`); });
      out(`  ✓ ${c.spec.name.padEnd(12)} ready (${((Date.now() - started) / 1000).toFixed(1)}s)`);
    }));
  }
  out(`Node ${o.nodeName} joined. Logs: ${p.logs}/<component>.log   Leave: mkctl node leave --node-name ${o.nodeName}${o.stateDir ? ` --state-dir ${o.stateDir}` : ''}`);
}

/** Foreground: children share our stdout/stderr, prefixed; any child exiting (or a signal) stops all. */
async function supervise(comps: Component[], p: NodePaths, out: (l: string) => void, timeoutMs: number): Promise<void> {
  const children = new Map<string, ChildProcess>();
  let signalled = false;
  const stopAll = (sig: NodeJS.Signals) => { for (const c of children.values()) if (c.exitCode === null) c.kill(sig); };
  const exited = new Promise<string>((resolve) => {
    const startOne = (c: Component) => {
      const child = spawn(c.spec.command, c.spec.args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...c.spec.env } });
      children.set(c.spec.name, child);
      child.on('exit', (code, signal) => resolve(`${c.spec.name} exited (${signal ?? `code ${code}`})`));
    };
    startOne(comps[0]!);
    // The kubelet and kube-proxy start once the shim's socket exists.
    const shim = children.get(comps[0]!.spec.name)!;
    waitFor('cri-docker', comps[0]!.ready, timeoutMs, () => (shim.exitCode === null && shim.signalCode === null ? undefined : 'cri-docker exited'))
      .then(() => { if (!signalled) for (const c of comps.slice(1)) startOne(c); }, (err: unknown) => resolve(err instanceof Error ? err.message : String(err)));
  });
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => { signalled = true; out(`node: ${sig}, stopping components`); stopAll('SIGTERM'); });
  const why = await exited;
  if (!signalled) out(`node: ${why}; stopping the others`);
  stopAll('SIGTERM');
  const deadline = Date.now() + 15_000;
  while ([...children.values()].some((c) => c.exitCode === null && c.signalCode === null) && Date.now() < deadline) await sleep(100);
  stopAll('SIGKILL');
  rmSync(p.socket, { force: true });
  // A component that died is a failure (compose restarts the container); a signal is a clean stop.
  if (!signalled) process.exitCode = 1;
}

export interface LeaveOptions {
  nodeName: string;
  stateDir?: string;
  /** Also delete the Node object through the apiserver the node joined. */
  deleteNode?: boolean;
  /** Keep the state dir (logs) instead of removing it. */
  keepState?: boolean;
  out?: (line: string) => void;
}

/**
 * Stops the node components, removes the pod containers this node's shim made (Docker label
 * io.mk8s.node=<node>), kube-proxy's rules and the CNI bridge of this namespace, and the node's
 * state (IPAM allocations, CNI config, kubelet dirs). Idempotent.
 */
export async function nodeLeave(o: LeaveOptions): Promise<void> {
  const out = o.out ?? ((l: string) => console.log(l));
  const p = nodePaths(stateDirFor(o.nodeName, o.stateDir));
  const meta = existsSync(p.meta) ? JSON.parse(readFileSync(p.meta, 'utf8')) as { server?: string; root?: string } : {};
  const names = existsSync(p.run) ? readdirSync(p.run).filter((f) => f.endsWith('.pid')).map((f) => f.slice(0, -4)) : [];
  // The kubelet first, so it does not restart pods the shim is losing; the shim last.
  const order = (n: string) => (n === 'kubelet' ? 0 : n === 'kube-proxy' ? 1 : 2);
  for (const n of names.sort((a, b) => order(a) - order(b))) if (await stopProcess(p.run, n)) out(`  stopped ${n}`);
  const ids = run('docker', ['ps', '-aq', '--filter', `label=io.mk8s.node=${o.nodeName}`], { allowFail: true }).stdout.split('\n').filter(Boolean);
  if (ids.length) { run('docker', ['rm', '-f', ...ids], { allowFail: true }); out(`  removed ${ids.length} pod container(s)`); }
  const proxy = meta.root ? join(meta.root, 'kube-proxy', 'dist', 'main.js') : undefined;
  if (proxy && existsSync(proxy)) run(process.execPath, [proxy, '--cleanup'], { allowFail: true });
  if (run('ip', ['link', 'show', 'cni0'], { allowFail: true }).ok) { run('ip', ['link', 'del', 'cni0'], { allowFail: true }); out('  removed bridge cni0'); }
  if (o.deleteNode && existsSync(p.kubeconfig)) {
    // As the node itself (NodeRestriction lets a node delete only its own Node).
    const client = createClientset({ kubeconfig: p.kubeconfig, userAgent: 'mkctl-node', maxRetries: 0 });
    try {
      await client.resource(Nodes).delete(o.nodeName);
      out(`  deleted Node ${o.nodeName}`);
    } catch (err) {
      if (isNotFound(err)) out(`  deleted Node ${o.nodeName}`);
      else out(`  could not delete Node ${o.nodeName} (${err instanceof Error ? err.message : String(err)})`);
    } finally { await client.close(); }
  }
  if (!o.keepState && existsSync(p.state)) { rmSync(p.state, { recursive: true, force: true }); out(`  removed ${p.state}`); }
  out(`Node ${o.nodeName} left`);
}

/** Reads a joined node's kubeconfig server (for messages and tests). */
export function joinedServer(stateDir: string): string | undefined {
  const f = nodePaths(stateDir).kubeconfig;
  if (!existsSync(f)) return undefined;
  const cfg = load(readFileSync(f, 'utf8')) as { clusters?: { cluster?: { server?: string } }[] } | undefined;
  return cfg?.clusters?.[0]?.cluster?.server;
}
