/**
 * `mkctl chaos kill|stop|restart <target>`: a fault to one or more of the local cluster's own
 * processes (a process name or a role: targets.ts), and with `--watch`, what the cluster does
 * until it has converged again. Only pids of this cluster's supervisor are signalled, and only
 * after /proc/<pid>/cmdline matches the process' spec (a reused pid is never hit).
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { Command } from 'commander';
import { Deployments, Leases, Nodes } from '@mk8s/api';
import { createClientset, loadKubeConfig, restConfigFromKubeConfig, type Clientset } from '@mk8s/client';
import { pkiPaths } from '@mk8s/component-base/pki';
import { statePaths, type StatePaths } from '../cluster/paths.js';
import { APISERVER_PORT } from '../cluster/network-plan.js';
import { isAlive, pidMatches, readPid } from '../cluster/processes.js';
import { readSpecs, readSupervisorStatus, supervisorPaths, type SupervisedSpec } from '../cluster/supervisor.js';
import { etcdLeader } from '../etcd/etcd-admin.js';
import { CHAOS_ACTIONS, ROLES, describeChanges, faultSignals, isConverged, resolveTarget, type ChaosAction, type ClusterFacts, type LeaseFact, type Observation } from './targets.js';
import { nonNegativeNumber } from '../flags.js';

const LEASES = { 'controller-manager': 'kube-controller-manager', scheduler: 'kube-scheduler' } as const;

function localClient(p: StatePaths): Clientset {
  return createClientset({ restConfig: restConfigFromKubeConfig(loadKubeConfig(p.kubeconfig)), userAgent: 'mkctl-chaos', qps: 0 });
}

async function leaseFact(c: Clientset, name: string): Promise<LeaseFact> {
  try {
    const l = await c.resource(Leases, 'kube-system').get(name, { signal: AbortSignal.timeout(3000) }) as { spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number } };
    const renew = Date.parse(l.spec?.renewTime ?? '');
    const valid = !!l.spec?.holderIdentity && Number.isFinite(renew) && renew + (l.spec?.leaseDurationSeconds ?? 15) * 1000 > Date.now();
    return { ...(l.spec?.holderIdentity ? { holder: l.spec.holderIdentity } : {}), valid };
  } catch { return { valid: false }; }
}

function readyz(p: StatePaths): Promise<boolean> {
  return new Promise((res) => {
    const req = request(`https://127.0.0.1:${APISERVER_PORT}/readyz`, { ca: readFileSync(pkiPaths(p.pki, []).ca.cert), timeout: 2000 }, (r) => { r.resume(); r.on('end', () => res(r.statusCode === 200)); });
    req.on('timeout', () => req.destroy());
    req.on('error', () => res(false));
    req.end();
  });
}

async function observe(p: StatePaths, c: Clientset, withEtcd: boolean): Promise<Observation> {
  const ready = await readyz(p);
  const leases: Record<string, string | undefined> = {};
  const nodes: Record<string, string> = {};
  const deployments: Record<string, string> = {};
  if (ready) {
    for (const l of Object.values(LEASES)) { const f = await leaseFact(c, l); leases[l] = f.valid ? f.holder : undefined; }
    try {
      for (const n of (await c.resource(Nodes).list({ signal: AbortSignal.timeout(3000) })).items as { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[]) {
        nodes[n.metadata.name] = n.status?.conditions?.find((x) => x.type === 'Ready')?.status ?? 'Unknown';
      }
      for (const d of (await c.resource(Deployments).list({ signal: AbortSignal.timeout(3000) })).items as { metadata: { name: string; namespace?: string }; spec?: { replicas?: number }; status?: { availableReplicas?: number } }[]) {
        deployments[`${d.metadata.namespace}/${d.metadata.name}`] = `${d.status?.availableReplicas ?? 0}/${d.spec?.replicas ?? 1}`;
      }
    } catch { /* the apiserver went away meanwhile: the next look sees it */ }
  }
  const leader = withEtcd ? etcdLeader(p).leader : 'etcd';
  // Processes last: the slow looks above must not make them stale when convergence is judged.
  const sup = readSupervisorStatus(supervisorPaths(p));
  const processes: Record<string, string> = {};
  for (const [n, s] of Object.entries(sup?.processes ?? {})) {
    processes[n] = s.state === 'running' ? (isAlive(s.pid) ? `running pid ${s.pid}` : 'NOT RUNNING') : s.state;
  }
  return { processes, apiserverReady: ready, ...(leader ? { etcdLeader: leader } : {}), leases, nodes, deployments };
}

export interface ChaosOptions { action: ChaosAction; target: string; seconds: number; watch: boolean; timeoutMs: number; out: (l: string) => void }

export async function runChaos(o: ChaosOptions, p: StatePaths = statePaths()): Promise<boolean> {
  const sp = supervisorPaths(p);
  const sup = readSupervisorStatus(sp);
  const specs = new Map(readSpecs(sp).map((s) => [s.name, s]));
  if (!sup || specs.size === 0) throw new Error('no local cluster runs under its supervisor here (mkctl cluster up)');
  const c = localClient(p);
  const needsEtcd = o.target.startsWith('etcd');
  const et = needsEtcd ? etcdLeader(p) : { followers: [] as string[] };
  const facts: ClusterFacts = {
    processes: [...specs.keys()].filter((n) => sup.processes[n]?.state === 'running').sort(),
    ...(et.leader ? { etcdLeader: et.leader } : {}), etcdFollowers: et.followers,
    leases: o.target.endsWith('-leader') && !needsEtcd
      ? { 'controller-manager': await leaseFact(c, LEASES['controller-manager']), scheduler: await leaseFact(c, LEASES.scheduler) } : {},
  };
  const r = resolveTarget(o.target, facts);
  if ('error' in r) throw new Error(r.error);
  const victims = r.names.map((name) => {
    const pid = readPid(p.run, name);
    const spec = specs.get(name)!;
    if (!pid || !isAlive(pid) || sup.processes[name]?.pid !== pid || !pidMatches(pid, spec)) throw new Error(`${name}: pid ${pid ?? '-'} is not the supervised process (mkctl cluster status)`);
    return { name, pid };
  });
  const t0 = Date.now();
  const stamp = () => `+${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s`;
  let before = o.watch ? await observe(p, c, true) : undefined;
  const baseline = before;
  const signals = faultSignals(o.action, o.seconds);
  const send = (sig: NodeJS.Signals) => {
    for (const v of victims) {
      try { process.kill(v.pid, sig); o.out(`${stamp()} sent ${sig} to ${v.name} (pid ${v.pid})`); } catch (err) { o.out(`${stamp()} ${v.name}: ${String(err)}`); }
    }
  };
  // A stopped process must not stay stopped because mkctl was interrupted.
  const cont = () => { for (const v of victims) { try { process.kill(v.pid, 'SIGCONT'); } catch { /* gone */ } } process.exit(130); };
  if (o.action === 'stop') process.once('SIGINT', cont);
  let faultDone = false;
  const fault = (async () => {
    for (const s of signals) {
      if (s.afterMs) await new Promise((res) => setTimeout(res, s.afterMs));
      send(s.signal);
    }
    faultDone = true;
    process.off('SIGINT', cont);
  })();
  if (!o.watch) { await fault; return true; }
  const deadline = t0 + o.timeoutMs;
  let replacedSeen = false;
  for (;;) {
    const now = await observe(p, c, true);
    for (const l of describeChanges(before, now)) o.out(`${stamp()} ${l}`);
    before = now;
    // Seen in the observation itself: each victim running again as a new process.
    // Converged is judged on a look that started after the replacement was seen, so no part of it predates the new processes.
    if (faultDone && replacedSeen && isConverged(now, baseline)) { o.out(`${stamp()} converged`); await fault; return true; }
    replacedSeen ||= o.action === 'stop' ? faultDone : victims.every((v) => now.processes[v.name]?.startsWith('running pid') && now.processes[v.name] !== `running pid ${v.pid}`);
    if (Date.now() > deadline) { o.out(`${stamp()} NOT converged after ${o.timeoutMs / 1000}s`); await fault; return false; }
    await new Promise((res) => setTimeout(res, 1000));
  }
}

export function registerChaosCommands(program: Command, _getCtx?: unknown): void {
  const chaos = program.command('chaos').description(`faults to the local cluster's own processes: a process name or a role (${ROLES.join(', ')})`);
  for (const action of CHAOS_ACTIONS) {
    const what = { kill: 'SIGKILL the target', stop: 'SIGSTOP the target for --seconds, then SIGCONT', restart: 'SIGTERM the target (its supervisor starts it again)' }[action];
    chaos.command(`${action} <target>`).description(what)
      .option('--seconds <n>', 'how long stop keeps it stopped', '10')
      .option('--watch', 'print what the cluster does until it has converged again')
      .option('--timeout <seconds>', 'how long --watch waits for convergence', '180')
      .action(async (target: string, f: { seconds: string; watch?: boolean; timeout: string }) => {
        const ok = await runChaos({ action, target, seconds: nonNegativeNumber('--seconds', f.seconds), watch: !!f.watch, timeoutMs: nonNegativeNumber('--timeout', f.timeout) * 1000, out: (l) => console.log(l) });
        if (!ok) process.exitCode = 1;
      });
  }
}
