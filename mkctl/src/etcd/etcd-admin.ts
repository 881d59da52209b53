/**
 * `mkctl etcd snapshot save|restore`, `mkctl etcd status|defrag|compact` for the local cluster's
 * 3 members: Debian's etcdctl 3.4 (which has `snapshot restore`; etcdutl came with 3.5) with the
 * apiserver's etcd client certificate, plus etcd's JSON gateway (`/v3/kv/put`, `/v3/kv/compaction`)
 * for what etcdctl 3.4 lacks: moving the revision forward after a restore.
 *
 * A restore makes the cluster of the snapshot's moment with resourceVersions that continue: every
 * member gets a new data dir from the snapshot (the old ones are kept aside), then the revision is
 * moved past the highest one the cluster had served (what etcdutl 3.5's `--bump-revision` does)
 * and compacted there (its `--mark-compacted`), so every watch and informer still holding an older
 * resourceVersion gets 410 Gone and relists instead of missing what the restore changed. The
 * apiserver is held (stopped by the supervisor) meanwhile and starts with an empty watch cache.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { resolve } from 'node:path';
import { pkiPaths } from '@mk8s/component-base/pki';
import { statePaths, type StatePaths } from '../cluster/paths.js';
import { ETCD_MEMBERS, APISERVER_PORT, etcdInitialCluster, isApiserverName, type EtcdMember } from '../cluster/network-plan.js';
import { readSpecs, readSupervisorStatus, setHold, supervisorPaths } from '../cluster/supervisor.js';
import { formatSize, parseEtcdJson, planRestore, revisionBump, spawnFailure, statusRows, type EndpointStatus, type MemberInfo } from './plan.js';

type Out = (line: string) => void;

interface EtcdTlsFiles { ca: string; cert: string; key: string }

function tlsFiles(p: StatePaths): EtcdTlsFiles {
  const pki = pkiPaths(p.pki, []);
  return { ca: pki.etcd.ca.cert, cert: pki.apiserverEtcdClient.cert, key: pki.apiserverEtcdClient.key };
}

const endpointOf = (m: EtcdMember) => `https://127.0.0.1:${m.clientPort}`;

/** Runs etcdctl against endpoints with the cluster's client certificate; throws with its stderr. */
function etcdctl(p: StatePaths, endpoints: string[], args: string[], opts: { allowFail?: boolean; timeoutMs?: number } = {}): { ok: boolean; stdout: string; stderr: string } {
  const t = tlsFiles(p);
  const r = spawnSync('etcdctl', ['--endpoints', endpoints.join(','), '--cacert', t.ca, '--cert', t.cert, '--key', t.key, '--command-timeout', '30s', ...args],
    { encoding: 'utf8', env: { ...process.env, ETCDCTL_API: '3' }, timeout: opts.timeoutMs ?? 120_000 });
  const ok = r.status === 0;
  if (!ok && !opts.allowFail) throw new Error(`etcdctl ${args.join(' ')}: ${spawnFailure(r)}`);
  return { ok, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Each reachable member's status (unreachable ones are left out; etcdctl reports them on stderr). */
function endpointStatuses(p: StatePaths): EndpointStatus[] {
  const r = etcdctl(p, ETCD_MEMBERS.map(endpointOf), ['endpoint', 'status', '-w', 'json'], { allowFail: true, timeoutMs: 30_000 });
  try { return parseEtcdJson<EndpointStatus[]>(r.stdout.trim() || '[]'); } catch { return []; }
}

function members(p: StatePaths): MemberInfo[] {
  const r = etcdctl(p, ETCD_MEMBERS.map(endpointOf), ['member', 'list', '-w', 'json'], { allowFail: true, timeoutMs: 30_000 });
  try { return parseEtcdJson<{ members?: MemberInfo[] }>(r.stdout).members ?? []; } catch { return []; }
}

/** The member name of the current leader, if the cluster has one. */
export function etcdLeader(p: StatePaths = statePaths()): { leader?: string; followers: string[] } {
  const st = endpointStatuses(p);
  const names = new Map(members(p).map((m) => [String(m.ID), m.name]));
  const leaderId = st.find((s) => s.Status.leader)?.Status.leader;
  const byEndpoint = new Map(ETCD_MEMBERS.map((m) => [endpointOf(m), m.name]));
  const leader = leaderId !== undefined ? names.get(String(leaderId)) : undefined;
  const followers = st.map((s) => byEndpoint.get(s.Endpoint)).filter((n): n is string => !!n && n !== leader);
  return { ...(leader ? { leader } : {}), followers };
}

export function etcdStatus(out: Out, p: StatePaths = statePaths()): boolean {
  const st = endpointStatuses(p);
  const rows = statusRows(ETCD_MEMBERS.map((m) => ({ name: m.name, endpoint: endpointOf(m) })), st);
  for (const l of rows) out(l);
  return st.length === ETCD_MEMBERS.length;
}

/** `etcdctl defrag`, one member at a time (a member blocks while it defragments). */
export function etcdDefrag(out: Out, p: StatePaths = statePaths()): void {
  const before = new Map(endpointStatuses(p).map((s) => [s.Endpoint, s.Status.dbSize]));
  for (const m of ETCD_MEMBERS) {
    etcdctl(p, [endpointOf(m)], ['defrag']);
    const after = endpointStatuses(p).find((s) => s.Endpoint === endpointOf(m))?.Status.dbSize;
    out(`Defragmented ${m.name} (${endpointOf(m)}): ${formatSize(before.get(endpointOf(m)))} -> ${formatSize(after)}`);
  }
}

/** Compacts the keyspace at revision (default: the current one). */
export function etcdCompact(out: Out, o: { revision?: number; physical?: boolean } = {}, p: StatePaths = statePaths()): number {
  const current = Math.max(0, ...endpointStatuses(p).map((s) => Number(s.Status.header.revision)));
  if (!current) throw new Error('etcd is not reachable: is the cluster up? (mkctl cluster status)');
  const rev = o.revision ?? current;
  etcdctl(p, ETCD_MEMBERS.map(endpointOf), ['compact', String(rev), ...(o.physical ? ['--physical'] : [])]);
  out(`Compacted etcd at revision ${rev} (current ${current}); watches from older resourceVersions now get 410 Gone`);
  return rev;
}

export function snapshotSave(file: string, out: Out, p: StatePaths = statePaths()): { revision: number; totalKey: number } {
  const target = resolve(file);
  const { leader } = etcdLeader(p);
  const m = ETCD_MEMBERS.find((x) => x.name === leader) ?? ETCD_MEMBERS[0]!;
  // etcdctl 3.4 saves from one endpoint; the leader has every committed write.
  etcdctl(p, [endpointOf(m)], ['snapshot', 'save', target]);
  const info = snapshotInfo(target);
  out(`Saved snapshot of etcd (from ${m.name}) at revision ${info.revision}: ${info.totalKey} keys, ${formatSize(info.totalSize)} -> ${target}`);
  return info;
}

function snapshotInfo(file: string): { revision: number; totalKey: number; totalSize: number; hash: number } {
  const r = spawnSync('etcdctl', ['snapshot', 'status', file, '-w', 'json'], { encoding: 'utf8', env: { ...process.env, ETCDCTL_API: '3' } });
  if (r.status !== 0) throw new Error(r.error ? `etcdctl snapshot status ${file}: ${spawnFailure(r)}` : `${file} is not an etcd snapshot: ${spawnFailure(r)}`);
  return JSON.parse(r.stdout) as { revision: number; totalKey: number; totalSize: number; hash: number };
}

/** POST to etcd's JSON gateway with the client certificate. */
function gateway(agent: Agent, endpoint: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolveP, reject) => {
    const req = request(`${endpoint}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json' }, timeout: 30_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => {
        if ((res.statusCode ?? 0) >= 300) reject(new Error(`etcd ${path}: ${res.statusCode} ${text.trim()}`));
        else { try { resolveP(parseEtcdJson<Record<string, unknown>>(text)); } catch (err) { reject(err as Error); } }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`etcd ${path}: timeout`)));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Puts to one key outside /registry until the revision reaches target; returns the revision reached. */
async function bumpRevision(p: StatePaths, target: number): Promise<number> {
  const t = tlsFiles(p);
  const agent = new Agent({ ca: readFileSync(t.ca), cert: readFileSync(t.cert), key: readFileSync(t.key), keepAlive: true, maxSockets: 16 });
  const endpoint = endpointOf(ETCD_MEMBERS[0]!);
  const key = Buffer.from('/mk8s/etcd-restore/revision').toString('base64');
  try {
    const put = async (): Promise<number> => Number((await gateway(agent, endpoint, '/v3/kv/put', { key, value: Buffer.from(String(Date.now())).toString('base64') }) as { header: { revision: string } }).header.revision);
    let rev = await put();
    while (rev < target) {
      const batch = Math.min(64, target - rev);
      const revs = await Promise.all(Array.from({ length: batch }, put));
      rev = Math.max(rev, ...revs);
    }
    return rev;
  } finally { agent.destroy(); }
}

async function waitUntil(what: string, f: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export interface RestoreOptions {
  file: string;
  /** Revision the restored cluster must pass (default: the running cluster's current one). */
  minRevision?: number;
  out: Out;
  timeoutMs?: number;
}

/**
 * Restores every member from the snapshot, keeping the old data dirs aside
 * (`.mk8s/etcd/<member>.before-restore-<time>`), with resourceVersions continuing (see above).
 */
export async function snapshotRestore(o: RestoreOptions, p: StatePaths = statePaths()): Promise<void> {
  const { out } = o;
  const timeoutMs = o.timeoutMs ?? 120_000;
  const file = resolve(o.file);
  if (!existsSync(file)) throw new Error(`no such snapshot: ${file}`);
  const info = snapshotInfo(file);
  const sp = supervisorPaths(p);
  const sup = readSupervisorStatus(sp);
  const supervised = ETCD_MEMBERS.every((m) => sup?.processes[m.name]);
  if (!supervised) throw new Error('the local cluster is not running under its supervisor: start it (mkctl cluster up) before a restore');
  const current = o.minRevision ?? Math.max(0, ...endpointStatuses(p).map((s) => Number(s.Status.header.revision)));
  if (!current) throw new Error('etcd is not reachable, so the revision to continue from is unknown: start the cluster, or pass --min-revision N');
  const target = revisionBump(info.revision, current);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const plan = planRestore({ members: ETCD_MEMBERS, etcdDir: p.etcd, file, stamp, token: 'mk8s-local' });
  out(`Restoring etcd from ${file} (revision ${info.revision}, ${info.totalKey} keys); the cluster is at revision ${current}`);

  // Every apiserver (one, or N behind the balancer): none may serve from a stale watch cache meanwhile.
  const apiservers = readSpecs(sp).map((x) => x.name).filter(isApiserverName).sort();
  const held = [...apiservers, ...ETCD_MEMBERS.map((m) => m.name)];
  await setHold(sp, apiservers, true, timeoutMs);
  await setHold(sp, ETCD_MEMBERS.map((m) => m.name), true, timeoutMs);
  out(`  stopped ${held.join(', ')} (held by the supervisor)`);
  let released = false;
  try {
    for (const step of plan) {
      rmSync(step.newDir, { recursive: true, force: true });
      const r = spawnSync('etcdctl', ['snapshot', 'restore', file, '--name', step.member, '--data-dir', step.newDir,
        '--initial-cluster', etcdInitialCluster(), '--initial-cluster-token', step.token, '--initial-advertise-peer-urls', step.peerUrl],
        { encoding: 'utf8', env: { ...process.env, ETCDCTL_API: '3' } });
      if (r.status !== 0) throw new Error(`etcdctl snapshot restore for ${step.member}: ${spawnFailure(r)}`);
    }
    for (const step of plan) {
      if (existsSync(step.dataDir)) renameSync(step.dataDir, step.asideDir);
      renameSync(step.newDir, step.dataDir);
      out(`  ${step.member}: new data dir from the snapshot; the old one kept at ${step.asideDir}`);
    }
    await setHold(sp, ETCD_MEMBERS.map((m) => m.name), false, timeoutMs);
    await waitUntil('etcd members healthy', () => endpointStatuses(p).length === ETCD_MEMBERS.length && etcdLeader(p).leader !== undefined, timeoutMs);
    const reached = await bumpRevision(p, target);
    etcdctl(p, ETCD_MEMBERS.map(endpointOf), ['compact', String(reached)]);
    out(`  revision moved from ${info.revision} to ${reached} and compacted there: new resourceVersions continue past ${current}, older watches get 410 Gone and relist`);
    await setHold(sp, apiservers, false, timeoutMs);
    released = true;
  } finally {
    // A failed restore must not leave the cluster stopped behind a hold.
    if (!released) { try { await setHold(sp, held, false, timeoutMs); } catch { /* reported below */ } }
  }
  if (apiservers.length > 0) {
    const ca = pkiPaths(p.pki, []).ca.cert;
    await waitUntil('apiserver /readyz', () => httpsOk(`https://127.0.0.1:${APISERVER_PORT}/readyz`, ca), timeoutMs);
  }
  out('Restored: etcd and the apiserver serve the snapshot\'s objects');
}

function httpsOk(url: string, ca: string): Promise<boolean> {
  return new Promise((res) => {
    const req = request(url, { ca: readFileSync(ca), timeout: 2000 }, (r) => { r.resume(); r.on('end', () => res((r.statusCode ?? 0) === 200)); });
    req.on('timeout', () => req.destroy());
    req.on('error', () => res(false));
    req.end();
  });
}
