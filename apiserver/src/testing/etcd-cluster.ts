/**
 * startEtcdCluster: a real multi-member etcd cluster (Debian etcd 3.4) on free 127.0.0.1 ports for
 * integration tests. etcdMemberArgs is the one place that knows etcd's flags; mkctl's `cluster up`
 * reuses it for the fixed-port cluster.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm } from 'node:fs/promises';
import { get as httpsGet } from 'node:https';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface EtcdMemberArgsOptions {
  name: string;
  dataDir: string;
  clientPort: number;
  peerPort: number;
  /** `name=http://127.0.0.1:peerPort,...` for every member; see etcdInitialCluster. */
  initialCluster: string;
  /** 'new' when bootstrapping the cluster, 'existing' when joining one. Ignored once dataDir holds a member. */
  state: 'new' | 'existing';
  /** @default '127.0.0.1' */
  host?: string;
  /** @default 'mk8s' */
  clusterToken?: string;
  /**
   * Client TLS (file paths): clients connect over https:// and must present a certificate signed
   * by ca (etcd's --client-cert-auth, as the cluster's etcd runs). Peers stay plain. @default plaintext
   */
  clientTls?: EtcdClientTls;
}

/** Files for etcd's client-facing TLS: its serving cert/key and the CA client certs must chain to. */
export interface EtcdClientTls { ca: string; cert: string; key: string }

/** The etcd command-line flags for one member. Pure. */
export function etcdMemberArgs(o: EtcdMemberArgsOptions): string[] {
  const host = o.host ?? '127.0.0.1';
  const client = `${o.clientTls ? 'https' : 'http'}://${host}:${o.clientPort}`;
  const peer = `http://${host}:${o.peerPort}`;
  return [
    `--name=${o.name}`,
    `--data-dir=${o.dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=${o.initialCluster}`,
    `--initial-cluster-state=${o.state}`,
    `--initial-cluster-token=${o.clusterToken ?? 'mk8s'}`,
    // As kubeadm configures it: the watch cache learns its revision is current within 5 s even
    // when its resource is idle (etcd's default is 10 min).
    '--experimental-watch-progress-notify-interval=5s',
    '--logger=zap',
    '--log-outputs=stderr',
    '--log-level=warn',
    ...(o.clientTls ? [`--cert-file=${o.clientTls.cert}`, `--key-file=${o.clientTls.key}`, '--client-cert-auth', `--trusted-ca-file=${o.clientTls.ca}`] : []),
  ];
}

/** The --initial-cluster value for members on host. */
export function etcdInitialCluster(members: { name: string; peerPort: number; host?: string }[]): string {
  return members.map((m) => `${m.name}=http://${m.host ?? '127.0.0.1'}:${m.peerPort}`).join(',');
}

export interface StartEtcdClusterOptions {
  /** @default 3 */
  members?: number;
  /** Parent directory for member data; a fresh temp dir (removed by stop) when unset. */
  dataDir?: string;
  /** How long to wait for every member to report healthy. @default 60000 */
  timeoutMs?: number;
  /**
   * Serve clients over TLS with client-certificate auth; `healthClient` is the client identity the
   * health checks present. Endpoints are then https://. @default plaintext
   */
  tls?: EtcdClientTls & { healthClient: { cert: string; key: string } };
}

export interface EtcdCluster {
  /** Client URLs (`http://127.0.0.1:port`, https:// with tls), one per member, in member order. */
  endpoints: string[];
  /** Directory holding `<name>/` data and `<name>.log` for each member. */
  dataDir: string;
  /** Stops every member (SIGTERM, then SIGKILL) and removes a temp data dir. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILLs one member and waits for it to exit. */
  kill(memberIndex: number): Promise<void>;
  /** Starts a killed member again on the same ports and data, and waits until it is healthy. */
  restart(memberIndex: number): Promise<void>;
}

interface Member { name: string; clientPort: number; peerPort: number; dir: string; proc: ChildProcess | undefined }

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Starts a static etcd cluster and resolves once every member is healthy. */
export async function startEtcdCluster(opts: StartEtcdClusterOptions = {}): Promise<EtcdCluster> {
  const n = opts.members ?? 3;
  const ownDir = opts.dataDir === undefined;
  const root = opts.dataDir ?? await mkdtemp(join(tmpdir(), 'mk8s-etcd-'));
  await mkdir(root, { recursive: true });
  installExitHook();
  let lastErr: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    // A port picked free can be taken before etcd binds it (other engineers' tests); retry fresh.
    const ports = await freePorts(2 * n);
    const members: Member[] = Array.from({ length: n }, (_, i) => ({
      name: `etcd${i}-${attempt}`, clientPort: ports[2 * i]!, peerPort: ports[2 * i + 1]!, dir: join(root, `etcd${i}-${attempt}`), proc: undefined,
    }));
    const initialCluster = etcdInitialCluster(members);
    const launch = (m: Member) => {
      const args = etcdMemberArgs({
        name: m.name, dataDir: m.dir, clientPort: m.clientPort, peerPort: m.peerPort, initialCluster, state: 'new',
        ...(opts.tls ? { clientTls: opts.tls } : {}),
      });
      const proc = spawn('etcd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      proc.stderr!.pipe(createWriteStream(join(root, `${m.name}.log`), { flags: 'a' }));
      live.add(proc);
      proc.once('exit', () => live.delete(proc));
      m.proc = proc;
    };
    members.forEach(launch);
    const stopAll = async () => { await Promise.all(members.map((m) => stopProc(m))); };
    try {
      await Promise.all(members.map((m) => waitHealthy(m, opts.timeoutMs ?? 60_000, opts.tls)));
    } catch (err) {
      lastErr = err;
      await stopAll();
      continue;
    }
    let stopped = false;
    return {
      endpoints: members.map((m) => `${opts.tls ? 'https' : 'http'}://127.0.0.1:${m.clientPort}`),
      dataDir: root,
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopAll();
        if (ownDir) await rm(root, { recursive: true, force: true });
      },
      async kill(i) {
        const m = memberAt(members, i);
        if (!m.proc || m.proc.exitCode !== null) return;
        const exited = new Promise((r) => m.proc!.once('exit', r));
        m.proc.kill('SIGKILL');
        await exited;
      },
      async restart(i) {
        const m = memberAt(members, i);
        if (m.proc && m.proc.exitCode === null && m.proc.signalCode === null) throw new Error(`etcd member ${i} is still running`);
        launch(m);
        await waitHealthy(m, opts.timeoutMs ?? 60_000, opts.tls);
      },
    };
  }
  if (ownDir) await rm(root, { recursive: true, force: true });
  throw new Error(`etcd cluster did not become healthy: ${String(lastErr)}`);
}

function memberAt(members: Member[], i: number): Member {
  const m = members[i];
  if (!m) throw new Error(`no etcd member ${i}`);
  return m;
}

async function waitHealthy(m: Member, timeoutMs: number, tls?: StartEtcdClusterOptions['tls']): Promise<void> {
  const proc = m.proc!;
  const exited = () => proc.exitCode !== null || proc.signalCode !== null;
  if (tls) {
    const [ca, cert, key] = await Promise.all([readFile(tls.ca), readFile(tls.healthClient.cert), readFile(tls.healthClient.key)]);
    await waitForEtcdHealthy(`https://127.0.0.1:${m.clientPort}`, { timeoutMs, abortIf: exited, tls: { ca, cert, key } });
  } else {
    await waitForEtcdHealthy(`http://127.0.0.1:${m.clientPort}`, { timeoutMs, abortIf: exited });
  }
  if (exited()) throw new Error(`etcd member ${m.name} exited (${proc.exitCode ?? proc.signalCode})`);
}

/**
 * Polls an etcd member's /health until it reports healthy (it has a leader), for test harnesses and
 * `mkctl cluster up`. Rejects after timeoutMs, or early once abortIf() is true (e.g. the process exited).
 */
export async function waitForEtcdHealthy(clientUrl: string, opts: { timeoutMs?: number; abortIf?: () => boolean; tls?: { ca: Buffer; cert: Buffer; key: Buffer } } = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (opts.abortIf?.()) return;
    try {
      if (opts.tls) {
        if (await httpsHealthy(`${clientUrl}/health`, opts.tls)) return;
      } else {
        const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(2_000) });
        const body = await res.json() as { health?: string };
        if (res.ok && body.health === 'true') return;
      }
    } catch { /* not up yet */ }
    if (Date.now() > deadline) throw new Error(`etcd at ${clientUrl} not healthy after ${timeoutMs}ms`);
    await new Promise((r) => setTimeout(r, 100));                       // polling a real process, not a test sleep
  }
}

/** etcd's /health over TLS with a client certificate (fetch has no client-certificate option). */
function httpsHealthy(url: string, tls: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = httpsGet(url, { ...tls, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => {
        try { resolve(res.statusCode === 200 && (JSON.parse(body) as { health?: string }).health === 'true'); } catch (err) { reject(err as Error); }
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

async function stopProc(m: Member): Promise<void> {
  const p = m.proc;
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(t);
}

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise<import('node:net').Server>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(s));
  })));
  const ports = servers.map((s) => (s.address() as import('node:net').AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** A test process that dies without stop() must not leave etcd members behind. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => { for (const p of live) p.kill('SIGKILL'); });
}
