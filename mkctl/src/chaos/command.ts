/**
 * `mkctl chaos kill|stop|restart <target>`: a fault to one or more of the local cluster's own
 * processes (a process name or a role: targets.ts), and with `--watch`, what the cluster does
 * until it has converged again. Only pids of this cluster's supervisor are signalled, and only
 * after /proc/<pid>/cmdline matches the process' spec (a reused pid is never hit).
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:https';
import type { Command } from 'commander';
import { Deployments, Leases, Nodes, Pods } from '@mk8s/api';
import { createClientset, loadKubeConfig, restConfigFromKubeConfig, type Clientset } from '@mk8s/client';
import { pkiPaths } from '@mk8s/component-base/pki';
import { statePaths, type StatePaths } from '../cluster/paths.js';
import { APISERVER_PORT, HOST_BRIDGE_IP } from '../cluster/network-plan.js';
import { isAlive, pidMatches, readPid } from '../cluster/processes.js';
import { kickSupervisor, readSpecs, readSupervisorStatus, setHold, superviseSpec, supervisorPaths, type SupervisedSpec } from '../cluster/supervisor.js';
import { etcdLeader } from '../etcd/etcd-admin.js';
import { CHAOS_ACTIONS, ROLES, componentInstances, nodeLossHandled, describeChanges, faultSignals, isConverged, leaderFromMetrics, nodeProcesses, parseSeconds, needsEtcdFacts, resolveTarget, type ChaosAction, type ClusterFacts, type LeaseFact, type Observation } from './targets.js';
import { healFault, healFaults, nodeDown, partitionNode, readFaults, type NodeDownMode, type NodeFaultRecord } from './node-faults.js';
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

/** Which supervised instance of comp reports leading (leader_election_master_status 1 on its /metrics). */
async function leaderInstance(comp: 'controller-manager' | 'scheduler', specs: Map<string, SupervisedSpec>): Promise<string | undefined> {
  for (const name of componentInstances(comp, [...specs.keys()])) {
    const args = specs.get(name)!.args;
    const port = args[args.indexOf('--health-port') + 1];
    if (!port || args.indexOf('--health-port') < 0) continue;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2000) });
      if (leaderFromMetrics(await res.text(), LEASES[comp])) return name;
    } catch { /* not serving: not the leader */ }
  }
  return undefined;
}

function readyz(p: StatePaths): Promise<boolean> {
  return new Promise((res) => {
    const req = request(`https://127.0.0.1:${APISERVER_PORT}/readyz`, { ca: readFileSync(pkiPaths(p.pki, []).ca.cert), timeout: 2000 }, (r) => { r.resume(); r.on('end', () => res(r.statusCode === 200)); });
    req.on('timeout', () => req.destroy());
    req.on('error', () => res(false));
    req.end();
  });
}

async function observe(p: StatePaths, c: Clientset, withEtcd: boolean, withPods = false): Promise<Observation> {
  const ready = await readyz(p);
  const leases: Record<string, string | undefined> = {};
  const nodes: Record<string, string> = {};
  const deployments: Record<string, string> = {};
  const taints: Record<string, string> = {};
  const pods: Record<string, string> = {};
  if (ready) {
    for (const l of Object.values(LEASES)) { const f = await leaseFact(c, l); leases[l] = f.valid ? f.holder : undefined; }
    try {
      for (const n of (await c.resource(Nodes).list({ signal: AbortSignal.timeout(3000) })).items as { metadata: { name: string }; spec?: { taints?: { key: string; effect: string }[] }; status?: { conditions?: { type: string; status: string }[] } }[]) {
        nodes[n.metadata.name] = n.status?.conditions?.find((x) => x.type === 'Ready')?.status ?? 'Unknown';
        taints[n.metadata.name] = (n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort().join(',') || 'none';
      }
      if (withPods) {
        for (const x of (await c.resource(Pods).list({ signal: AbortSignal.timeout(3000) })).items as { metadata: { name: string; namespace?: string; deletionTimestamp?: string }; spec?: { nodeName?: string }; status?: { phase?: string } }[]) {
          if (x.metadata.namespace === 'kube-system') continue;
          pods[`${x.metadata.namespace}/${x.metadata.name}`] = `${x.spec?.nodeName ?? '-'} ${x.metadata.deletionTimestamp ? 'Terminating' : x.status?.phase ?? 'Pending'}`;
        }
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
  return { processes, apiserverReady: ready, ...(leader ? { etcdLeader: leader } : {}), leases, nodes, deployments, taints, ...(withPods ? { pods } : {}) };
}

export interface ChaosOptions { action: ChaosAction; target: string; seconds: number; watch: boolean; timeoutMs: number; out: (l: string) => void }

export async function runChaos(o: ChaosOptions, p: StatePaths = statePaths()): Promise<boolean> {
  const sp = supervisorPaths(p);
  const sup = readSupervisorStatus(sp);
  const specs = new Map(readSpecs(sp).map((s) => [s.name, s]));
  if (!sup || specs.size === 0) throw new Error('no local cluster runs under its supervisor here (mkctl cluster up)');
  const c = localClient(p);
  const needsEtcd = needsEtcdFacts(o.target);
  const et = needsEtcd ? etcdLeader(p) : { followers: [] as string[] };
  const facts: ClusterFacts = {
    processes: [...specs.keys()].filter((n) => sup.processes[n]?.state === 'running').sort(),
    ...(et.leader ? { etcdLeader: et.leader } : {}), etcdFollowers: et.followers,
    leases: o.target.endsWith('-leader') && !needsEtcd
      ? { 'controller-manager': await leaseFact(c, LEASES['controller-manager']), scheduler: await leaseFact(c, LEASES.scheduler) } : {},
  };
  if (o.target === 'controller-manager-leader' || o.target === 'scheduler-leader') {
    const comp = o.target === 'scheduler-leader' ? 'scheduler' : 'controller-manager';
    const l = await leaderInstance(comp, specs);
    if (l) facts.leaders = { [comp]: l };
  }
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

export interface NodeFaultOptions {
  kind: 'node-down' | 'partition'; node: string; mode: NodeDownMode;
  /** Undo after this long; undefined: left in force until `mkctl chaos node-up`. */
  seconds?: number;
  watch: boolean; timeoutMs: number; out: (l: string) => void;
}

const without = <T>(r: Record<string, T> | undefined, drop: (k: string) => boolean): Record<string, T> => Object.fromEntries(Object.entries(r ?? {}).filter(([k]) => !drop(k)));

/**
 * `mkctl chaos node-down|partition <node>`: the fault, undone after --for (also on SIGINT/SIGTERM,
 * and by the watchdog if this mkctl dies), and with --watch what the cluster does meanwhile until
 * it has converged: the node back and Ready, or (left down) its workloads available elsewhere.
 */
export async function runNodeFault(o: NodeFaultOptions, p: StatePaths = statePaths()): Promise<boolean> {
  const sp = supervisorPaths(p);
  const sup = readSupervisorStatus(sp);
  const specs = new Map(readSpecs(sp).map((s) => [s.name, s]));
  if (!sup || specs.size === 0) throw new Error('no local cluster runs under its supervisor here (mkctl cluster up)');
  const running = [...specs.keys()].filter((n) => sup.processes[n]?.state === 'running');
  const procs = nodeProcesses(o.node, [...specs.keys()]);
  if (procs.length === 0) throw new Error(`no process of node ${o.node} is supervised (nodes: ${[...new Set([...specs.keys()].map((n) => /^(node-\d+)-/.exec(n)?.[1]).filter(Boolean))].join(', ')})`);
  const c = localClient(p);
  const t0 = Date.now();
  const stamp = () => `+${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s`;
  const out = (l: string) => o.out(`${stamp()} ${l}`);
  const baseline = o.watch ? await observe(p, c, false, true) : undefined;
  let rec: NodeFaultRecord;
  if (o.kind === 'node-down') {
    const down = procs.filter((n) => running.includes(n));
    rec = nodeDown(p, { node: o.node, processes: down, mode: o.mode, ...(o.seconds !== undefined ? { seconds: o.seconds } : {}), out });
  } else {
    rec = partitionNode(p, { node: o.node, addresses: [HOST_BRIDGE_IP], ...(o.seconds !== undefined ? { seconds: o.seconds } : {}), out });
  }
  let healed = false;
  const heal = async () => { if (!healed) { healed = true; await healFault(p, rec, out); } };
  // A fault with a deadline never outlives this command: an interrupt undoes it at once.
  const onSignal = () => { void heal().finally(() => process.exit(130)); };
  if (o.seconds !== undefined) { process.once('SIGINT', onSignal); process.once('SIGTERM', onSignal); }
  const undoAt = o.seconds !== undefined ? t0 + o.seconds * 1000 : Infinity;
  try {
    if (!o.watch) {
      if (o.seconds !== undefined) { await new Promise((res) => setTimeout(res, o.seconds! * 1000)); await heal(); }
      else out(`${o.node} stays ${o.kind === 'node-down' ? 'down' : 'partitioned'} until: mkctl chaos node-up ${o.node}`);
      return true;
    }
    let before = baseline;
    const deadline = t0 + (o.seconds ?? 0) * 1000 + o.timeoutMs;
    for (;;) {
      if (Date.now() >= undoAt) await heal();
      const now = await observe(p, c, false, true);
      for (const l of describeChanges(before, now)) out(l);
      before = now;
      // Left down: converged once what ran before runs again without the nodes under a fault (this one and any other left down).
      const faulted = new Set([...(o.seconds === undefined ? [o.node] : []), ...readFaults(p).filter((r) => r.node !== o.node || o.seconds === undefined).map((r) => r.node)]);
      const outside = (k: string) => [...faulted].some((n) => k === n || nodeProcesses(n, [k]).length > 0);
      const done = (o.seconds === undefined ? nodeLossHandled(now, [...faulted]) : healed)
        && isConverged({ ...now, processes: without(now.processes, outside), nodes: without(now.nodes, outside) }, { ...baseline!, nodes: without(baseline!.nodes, outside) });
      if (done) { out('converged'); return true; }
      if (Date.now() > deadline) { out(`NOT converged after ${((Date.now() - t0) / 1000).toFixed(0)}s`); return false; }
      await new Promise((res) => setTimeout(res, Math.max(0, Math.min(1000, undoAt - Date.now()))));
    }
  } finally {
    if (o.seconds !== undefined) { await heal(); process.off('SIGINT', onSignal); process.off('SIGTERM', onSignal); }
  }
}

/**
 * A second instance of a leader-elected component (`<comp>-2`, its health port +10), supervised
 * like the first: what an HA control plane runs, so that a leader fault has a standby to take
 * over (one instance alone can only take its own Lease back after a restart). remove: held, then
 * forgotten.
 */
export async function standby(comp: 'controller-manager' | 'scheduler', remove: boolean, out: (l: string) => void, p: StatePaths = statePaths()): Promise<void> {
  const sp = supervisorPaths(p);
  const name = `${comp}-2`;
  const specs = new Map(readSpecs(sp).map((s) => [s.name, s]));
  if (remove) {
    if (!specs.has(name)) { out(`no ${name}`); return; }
    await setHold(sp, [name], true);
    rmSync(join(sp.specs, `${name}.json`), { force: true });
    rmSync(join(p.run, `${name}.pid`), { force: true });
    kickSupervisor(sp);
    out(`stopped and removed ${name}`);
    return;
  }
  const first = specs.get(comp);
  if (!first) throw new Error(`${comp} is not supervised (mkctl cluster up)`);
  const args = [...first.args];
  const i = args.indexOf('--health-port');
  if (i < 0 || !args[i + 1]) throw new Error(`${comp} has no --health-port`);
  const port = Number(args[i + 1]) + 10;
  args[i + 1] = String(port);
  superviseSpec(sp, { ...first, name, args });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try { if ((await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })).ok) break; } catch { /* starting */ }
    if (Date.now() > deadline) throw new Error(`${name} not ready after 60s; see ${join(p.logs, `${name}.log`)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  out(`${name} running (health port ${port}), standing by for the ${LEASES[comp]} Lease`);
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
  const forOpt = (v: string | undefined) => (v === undefined ? undefined : parseSeconds('--for', v));
  chaos.command('node-down <node>').description("stop (SIGSTOP) or kill (held down by the supervisor) every process of a node: kubelet, CRI shim, kube-proxy; back after --for, else at 'mkctl chaos node-up'")
    .option('--for <duration>', 'bring it back after this long (60, 60s, 2m)')
    .option('--mode <stop|kill>', 'SIGSTOP the processes, or SIGKILL them and keep them down', 'stop')
    .option('--watch', 'print what the cluster does until it has converged again')
    .option('--timeout <seconds>', 'how long --watch waits for convergence (after --for)', '600')
    .action(async (node: string, f: { for?: string; mode: string; watch?: boolean; timeout: string }) => {
      if (f.mode !== 'stop' && f.mode !== 'kill') throw new Error(`invalid --mode "${f.mode}": stop or kill`);
      const secs = forOpt(f.for);
      const ok = await runNodeFault({ kind: 'node-down', node, mode: f.mode, ...(secs !== undefined ? { seconds: secs } : {}), watch: !!f.watch, timeoutMs: nonNegativeNumber('--timeout', f.timeout) * 1000, out: (l) => console.log(l) });
      if (!ok) process.exitCode = 1;
    });
  chaos.command('partition <node>').description(`drop all traffic between a node's network namespace and the control plane (${HOST_BRIDGE_IP}) with iptables, undone after --for`)
    .requiredOption('--for <duration>', 'how long (60, 60s, 2m)')
    .option('--watch', 'print what the cluster does until it has converged again')
    .option('--timeout <seconds>', 'how long --watch waits for convergence (after --for)', '600')
    .action(async (node: string, f: { for: string; watch?: boolean; timeout: string }) => {
      const ok = await runNodeFault({ kind: 'partition', node, mode: 'stop', seconds: parseSeconds('--for', f.for), watch: !!f.watch, timeoutMs: nonNegativeNumber('--timeout', f.timeout) * 1000, out: (l) => console.log(l) });
      if (!ok) process.exitCode = 1;
    });
  chaos.command('node-up <node>').description('undo node-down and partition of a node')
    .action(async (node: string) => {
      const n = await healFaults(statePaths(), { node, out: (l) => console.log(l) });
      if (n === 0) console.log(`no fault in force on ${node}`);
    });
  chaos.command('standby <component>').description('run (or --remove) a second supervised instance of controller-manager or scheduler, to take over its Lease')
    .option('--remove', 'stop and forget it')
    .action(async (comp: string, f: { remove?: boolean }) => {
      if (comp !== 'controller-manager' && comp !== 'scheduler') throw new Error(`invalid component ${comp}: controller-manager or scheduler`);
      await standby(comp, !!f.remove, (l) => console.log(l));
    });
  chaos.command('heal').description('undo the node faults in force (all, or those past their --for)')
    .option('--expired', 'only those whose --for has passed (what the watchdog runs)')
    .action(async (f: { expired?: boolean }) => {
      const p = statePaths();
      const n = await healFaults(p, { expiredOnly: !!f.expired, out: (l) => console.log(l) });
      if (!f.expired || n > 0) console.log(`${n} fault(s) healed; ${readFaults(p).length} in force`);
    });
}
