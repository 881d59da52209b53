/**
 * Node faults of `mkctl chaos`: `node-down` (every process of a node stopped with SIGSTOP, or
 * killed and held down by the supervisor), `partition` (the node's netns cut off from the
 * control plane: partition.ts) and their undo (`node-up`, the end of `--for`, an interrupt, the
 * watchdog, `cluster down`).
 *
 * Each fault in force is a record under .mk8s/chaos/<node>.<kind>.json saying how to undo it,
 * written before the fault is applied and removed once undone, so any later mkctl can heal what
 * an earlier one (killed, or run without --for) left. A fault with a deadline also starts a small
 * detached watchdog (`sleep; mkctl chaos heal --expired`), so it is undone even if mkctl dies.
 * Safety: only pids the supervisor started for this cluster whose /proc cmdline matches their spec,
 * and only this cluster's node namespaces (mk8s-<node>) are touched.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StatePaths } from '../cluster/paths.js';
import { isAlive, pidMatches, readPid, run } from '../cluster/processes.js';
import { kickSupervisor, readSpecs, readSupervisorStatus, supervisorPaths, type SupervisedSpec } from '../cluster/supervisor.js';
import { partitionPlan, renderArgv, type Argv } from './partition.js';

export type NodeFaultKind = 'node-down' | 'partition';
export type NodeDownMode = 'stop' | 'kill';

export interface NodeFaultRecord {
  kind: NodeFaultKind;
  node: string;
  netns: string;
  /** ISO times. */
  since: string;
  until?: string;
  mode?: NodeDownMode;
  /** node-down: the processes faulted (stop: the pids to SIGCONT; kill: the specs to release). */
  processes?: { name: string; pid: number }[];
  /** partition: the commands that undo it. */
  undo?: Argv[];
  watchdogPid?: number;
}

const chaosDir = (p: StatePaths) => join(p.state, 'chaos');
const recordFile = (p: StatePaths, node: string, kind: NodeFaultKind) => join(chaosDir(p), `${node}.${kind}.json`);

function writeAtomic(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

export function readFaults(p: StatePaths): NodeFaultRecord[] {
  const dir = chaosDir(p);
  if (!existsSync(dir)) return [];
  const out: NodeFaultRecord[] = [];
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json')).sort()) {
    try { out.push(JSON.parse(readFileSync(join(dir, f), 'utf8')) as NodeFaultRecord); } catch { /* being written */ }
  }
  return out;
}

function saveFault(p: StatePaths, r: NodeFaultRecord): void {
  mkdirSync(chaosDir(p), { recursive: true });
  writeAtomic(recordFile(p, r.node, r.kind), `${JSON.stringify(r, null, 2)}\n`);
}

/** The node's netns as `cluster up` made it (only those are ever touched). */
export function nodeNetns(node: string): string {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(node)) throw new Error(`invalid node name ${node}`);
  return `mk8s-${node}`;
}

const sendGroup = (pid: number, sig: NodeJS.Signals) => { try { process.kill(-pid, sig); } catch { try { process.kill(pid, sig); } catch { /* gone */ } } };

const MKCTL_MAIN = fileURLToPath(new URL('../main.js', import.meta.url));

/** A detached `sleep N; mkctl chaos heal --expired`: undoes the fault if this mkctl is gone by then. */
function startWatchdog(p: StatePaths, afterSeconds: number): number | undefined {
  const main = existsSync(MKCTL_MAIN) ? [MKCTL_MAIN] : ['--import', 'tsx', MKCTL_MAIN.replace(/\.js$/, '.ts')];
  const child = spawn('sh', ['-c', `sleep ${Math.ceil(afterSeconds)}; exec "$0" "$@"`, process.execPath, ...main, 'chaos', 'heal', '--expired'],
    { detached: true, stdio: 'ignore', cwd: p.root, env: { ...process.env, MK8S_ROOT: p.root } });
  child.unref();
  return child.pid;
}

function stopWatchdog(pid: number | undefined): void {
  if (!pid || !isAlive(pid)) return;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (argv.includes('heal') && argv.includes('--expired')) sendGroup(pid, 'SIGKILL');
  } catch { /* gone */ }
}

export interface NodeDownOptions { node: string; processes: string[]; mode: NodeDownMode; seconds?: number; out: (l: string) => void }

/**
 * Takes a node down: each named supervised process (already checked to be this cluster's)
 * SIGSTOPped, or held by the supervisor and SIGKILLed. Returns the record (undo with healFault).
 */
export function nodeDown(p: StatePaths, o: NodeDownOptions): NodeFaultRecord {
  const sp = supervisorPaths(p);
  if (readFaults(p).some((r) => r.node === o.node && r.kind === 'node-down')) throw new Error(`node ${o.node} is down already (mkctl chaos node-up ${o.node})`);
  const sup = readSupervisorStatus(sp);
  const specs = new Map(readSpecs(sp).map((s) => [s.name, s]));
  const victims = o.processes.map((name) => {
    const pid = readPid(p.run, name);
    const spec = specs.get(name);
    if (!spec || !pid || !isAlive(pid) || sup?.processes[name]?.pid !== pid || !pidMatches(pid, spec)) throw new Error(`${name}: pid ${pid ?? '-'} is not the supervised process (mkctl cluster status)`);
    return { name, pid, spec };
  });
  const now = Date.now();
  const rec: NodeFaultRecord = {
    kind: 'node-down', node: o.node, netns: nodeNetns(o.node), mode: o.mode, since: new Date(now).toISOString(),
    ...(o.seconds !== undefined ? { until: new Date(now + o.seconds * 1000).toISOString() } : {}),
    processes: victims.map(({ name, pid }) => ({ name, pid })),
  };
  if (o.seconds !== undefined) { const w = startWatchdog(p, o.seconds + 5); if (w) rec.watchdogPid = w; }
  saveFault(p, rec);
  if (o.mode === 'kill') {
    // Held first (without a kick), so the supervisor records the exit as held, not as a crash to restart.
    for (const v of victims) writeAtomic(join(sp.specs, `${v.name}.json`), `${JSON.stringify({ ...v.spec, hold: true } satisfies SupervisedSpec, null, 2)}\n`);
  }
  for (const v of victims) { sendGroup(v.pid, o.mode === 'kill' ? 'SIGKILL' : 'SIGSTOP'); o.out(`sent ${o.mode === 'kill' ? 'SIGKILL' : 'SIGSTOP'} to ${v.name} (pid ${v.pid})`); }
  if (o.mode === 'kill') kickSupervisor(sp);
  return rec;
}

/** Cuts the node's netns off from addresses (the control plane). Returns the record. */
export function partitionNode(p: StatePaths, o: { node: string; addresses: string[]; seconds?: number; out: (l: string) => void }): NodeFaultRecord {
  if (readFaults(p).some((r) => r.node === o.node && r.kind === 'partition')) throw new Error(`node ${o.node} is partitioned already (mkctl chaos node-up ${o.node})`);
  const netns = nodeNetns(o.node);
  if (!run('ip', ['netns', 'list'], { allowFail: true }).stdout.split('\n').some((l) => l.split(' ')[0] === netns)) throw new Error(`no network namespace ${netns}: node ${o.node} is not a local node of this cluster`);
  const plan = partitionPlan({ netns, addresses: o.addresses });
  const now = Date.now();
  const rec: NodeFaultRecord = {
    kind: 'partition', node: o.node, netns, since: new Date(now).toISOString(),
    ...(o.seconds !== undefined ? { until: new Date(now + o.seconds * 1000).toISOString() } : {}), undo: plan.undo,
  };
  if (o.seconds !== undefined) { const w = startWatchdog(p, o.seconds + 5); if (w) rec.watchdogPid = w; }
  saveFault(p, rec);
  for (const a of plan.apply) {
    const r = run(a[0]!, a.slice(1), { allowFail: true });
    if (!r.ok) {
      for (const u of plan.undo) run(u[0]!, u.slice(1), { allowFail: true });
      rmSync(recordFile(p, o.node, 'partition'), { force: true });
      stopWatchdog(rec.watchdogPid);
      throw new Error(`${renderArgv(a)}: ${r.stderr.trim()}`);
    }
  }
  o.out(`partitioned ${o.node} (${netns}) from ${o.addresses.join(', ')}: traffic both ways dropped`);
  return rec;
}

/** Undoes one fault and forgets it. Idempotent. */
export async function healFault(p: StatePaths, r: NodeFaultRecord, out: (l: string) => void, o: { shuttingDown?: boolean } = {}): Promise<void> {
  const sp = supervisorPaths(p);
  if (r.kind === 'partition') {
    for (const u of r.undo ?? []) {
      // Only commands for the node's own netns, as the record was written (never a foreign command).
      if (u[0] === 'ip' && u[1] === 'netns' && u[2] === 'exec' && u[3] === r.netns && u[4] === 'iptables') run(u[0], u.slice(1), { allowFail: true });
    }
    out(`healed partition of ${r.node}`);
  } else if (r.mode === 'stop') {
    const specs = new Map(readSpecs(sp).map((s) => [s.name, s]));
    for (const v of r.processes ?? []) {
      const spec = specs.get(v.name);
      if (spec && isAlive(v.pid) && pidMatches(v.pid, spec)) { sendGroup(v.pid, 'SIGCONT'); out(`sent SIGCONT to ${v.name} (pid ${v.pid})`); }
    }
  } else if (o.shuttingDown) {
    out(`forgot node-down of ${r.node} (its processes stay stopped: the cluster goes down)`);
  } else {
    for (const v of r.processes ?? []) {
      const file = join(sp.specs, `${v.name}.json`);
      try {
        const { hold: _h, ...rest } = JSON.parse(readFileSync(file, 'utf8')) as SupervisedSpec;
        writeAtomic(file, `${JSON.stringify(rest, null, 2)}\n`);
      } catch { /* spec gone (cluster down) */ }
    }
    kickSupervisor(sp);
    const deadline = Date.now() + 30_000;
    const names = (r.processes ?? []).map((v) => v.name);
    while (existsSync(sp.specs) && Date.now() < deadline) {
      const st = readSupervisorStatus(sp);
      if (names.every((n) => st?.processes[n]?.state === 'running')) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    out(`released ${names.join(', ')} (the supervisor starts them again)`);
  }
  rmSync(recordFile(p, r.node, r.kind), { force: true });
  stopWatchdog(r.watchdogPid);
}

/** Heals the faults of node (or all), or only those whose deadline has passed. Returns how many. */
export async function healFaults(p: StatePaths, o: { node?: string; expiredOnly?: boolean; shuttingDown?: boolean; out: (l: string) => void }): Promise<number> {
  let n = 0;
  for (const r of readFaults(p)) {
    if (o.node && r.node !== o.node) continue;
    if (o.expiredOnly && !(r.until && Date.parse(r.until) <= Date.now())) continue;
    await healFault(p, r, o.out, { shuttingDown: !!o.shuttingDown });
    n++;
  }
  return n;
}
