/**
 * The local cluster's process supervisor (what systemd or the kubelet's static pods are to a
 * kubeadm control plane): one small detached process, started by `cluster up`, that starts every
 * long-running process of the cluster, restarts it when it exits (back-off 1 s doubling to 30 s,
 * reset after 5 min up: restart-backoff.ts) and records restarts and the last exit.
 *
 * Contract through files under .mk8s/ (so `cluster up`, `status`, `down`, `mkctl etcd` and
 * `mkctl chaos` need no socket to talk to it):
 * - `supervisor/specs/<name>.json` (written by `cluster up`): what to run (a `ProcessSpec`), and
 *   `hold: true` to stop it and keep it stopped (etcd snapshot restore). A removed spec is
 *   forgotten, not stopped. SIGHUP makes the supervisor read the folder at once (else every second).
 * - `run/<name>.pid`: the live pid of each process (the component itself: `ip netns exec` execs).
 * - `supervisor/status.json` (written by the supervisor on every change): state, pid, start time,
 *   restarts, back-off and last exit (code or signal, time) of each process.
 * - `run/supervisor.pid`: the supervisor. SIGTERM ends it and only it: its children run on, so
 *   `cluster down` stops the supervisor first (nothing restarts) and then the processes.
 * A supervisor started while processes of its specs are alive (after it was killed) adopts them:
 * it polls their pids, since it cannot wait for them; their exit code is then unknown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StatePaths } from './paths.js';
import { isAlive, pidFile, pidMatches, readPid, type ProcessSpec } from './processes.js';
import { DEFAULT_RESTART_POLICY, restartDelayMs, type RestartPolicy } from './restart-backoff.js';

/** A process as `cluster up` asks the supervisor to run it. */
export interface SupervisedSpec extends ProcessSpec {
  /** Stop it (SIGTERM to its process group, SIGKILL after 10 s) and keep it stopped. */
  hold?: boolean;
}

export type SupervisedState = 'running' | 'backoff' | 'stopping' | 'held';

export interface ExitRecord {
  /** Exit code, or null when it died of a signal or the exit was not seen (adopted process). */
  code: number | null;
  signal: string | null;
  /** ISO time the supervisor saw the exit. */
  at: string;
}

export interface ProcessStatus {
  name: string;
  state: SupervisedState;
  pid?: number;
  /** ISO time of the current (or last) start. */
  startedAt?: string;
  /** Starts after the first one. */
  restarts: number;
  lastExit?: ExitRecord;
  /** The back-off used before the current run (the next delay doubles it). */
  delayMs?: number;
  /** In back-off: when it starts again (ISO). */
  nextStartAt?: string;
  /** Running, but started by an earlier supervisor: watched by polling its pid. */
  adopted?: boolean;
}

export interface SupervisorStatus { pid: number; startedAt: string; updatedAt: string; processes: Record<string, ProcessStatus> }

export type SupervisorAction = 'start' | 'adopt' | 'stop' | 'hold' | 'none';

/**
 * What to do with one supervised process now (pure). status is the supervisor's record
 * (undefined for a spec it has not seen), alive whether the pid file names a live process.
 */
export function decide(spec: SupervisedSpec, status: ProcessStatus | undefined, alive: boolean, nowMs: number): SupervisorAction {
  if (!status) return alive ? 'adopt' : spec.hold ? 'hold' : 'start';
  switch (status.state) {
    case 'running': return spec.hold ? 'stop' : 'none';
    case 'stopping': return 'none';
    case 'held': return spec.hold ? 'none' : 'start';
    case 'backoff':
      if (spec.hold) return 'hold';
      return Date.parse(status.nextStartAt ?? '') <= nowMs ? 'start' : 'none';
  }
}

/**
 * The record after a process exited (pure): held if it was being stopped or is on hold,
 * else in back-off until now + the next delay.
 */
export function afterExit(status: ProcessStatus, exit: { code: number | null; signal: string | null }, nowMs: number, hold: boolean, policy: RestartPolicy = DEFAULT_RESTART_POLICY): ProcessStatus {
  const { pid: _pid, adopted: _adopted, nextStartAt: _next, ...rest } = status;
  const lastExit: ExitRecord = { code: exit.code, signal: exit.signal, at: new Date(nowMs).toISOString() };
  if (hold || status.state === 'stopping') return { ...rest, state: 'held', lastExit };
  const upMs = status.startedAt ? Math.max(0, nowMs - Date.parse(status.startedAt)) : 0;
  const delayMs = restartDelayMs(status.delayMs, upMs, policy);
  return { ...rest, state: 'backoff', lastExit, delayMs, nextStartAt: new Date(nowMs + delayMs).toISOString() };
}

// ---- file layout ----------------------------------------------------------------------------

export interface SupervisorPaths { dir: string; specs: string; status: string; run: string; logs: string }

export function supervisorPaths(p: Pick<StatePaths, 'state' | 'run' | 'logs'>): SupervisorPaths {
  const dir = join(p.state, 'supervisor');
  return { dir, specs: join(dir, 'specs'), status: join(dir, 'status.json'), run: p.run, logs: p.logs };
}

export const SUPERVISOR_NAME = 'supervisor';

function writeAtomic(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

export function readSupervisorStatus(sp: SupervisorPaths): SupervisorStatus | undefined {
  try { return JSON.parse(readFileSync(sp.status, 'utf8')) as SupervisorStatus; } catch { return undefined; }
}

export function readSpecs(sp: SupervisorPaths): SupervisedSpec[] {
  if (!existsSync(sp.specs)) return [];
  const out: SupervisedSpec[] = [];
  for (const f of readdirSync(sp.specs).filter((f) => f.endsWith('.json')).sort()) {
    try { out.push(JSON.parse(readFileSync(join(sp.specs, f), 'utf8')) as SupervisedSpec); } catch { /* being written */ }
  }
  return out;
}

// ---- the supervisor process -------------------------------------------------------------------

interface Entry { spec: SupervisedSpec; status: ProcessStatus; child?: ChildProcess; killTimer?: NodeJS.Timeout }

export interface SupervisorOptions {
  paths: SupervisorPaths;
  /** One JSON line per event (the supervisor's log). */
  log?: (event: Record<string, unknown>, msg: string) => void;
  policy?: RestartPolicy;
  tickMs?: number;
  stopGraceMs?: number;
}

export class Supervisor {
  private readonly entries = new Map<string, Entry>();
  private readonly startedAt = new Date().toISOString();
  private dirty = true;
  private timer?: NodeJS.Timeout;
  private readonly log: (event: Record<string, unknown>, msg: string) => void;

  constructor(private readonly o: SupervisorOptions) {
    this.log = o.log ?? ((e, msg) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), msg, ...e })}\n`));
  }

  /** Runs until signal aborts; leaves the children running. */
  async run(signal: AbortSignal): Promise<void> {
    mkdirSync(this.o.paths.specs, { recursive: true });
    mkdirSync(this.o.paths.run, { recursive: true });
    // Carry restarts and last exits over from an earlier supervisor of this cluster.
    const prev = readSupervisorStatus(this.o.paths);
    for (const spec of readSpecs(this.o.paths)) {
      const old = prev?.processes[spec.name];
      const pid = readPid(this.o.paths.run, spec.name);
      if (old && isAlive(pid) && old.pid === pid && pidMatches(pid!, spec)) this.entries.set(spec.name, { spec, status: { ...old, state: 'running', adopted: true } });
      else if (old) {
        // It died while no supervisor watched: start it at once (its exit went unseen).
        const { pid: _pid, adopted: _a, ...rest } = old;
        const gone = old.state === 'running' || old.state === 'stopping';
        this.entries.set(spec.name, { spec, status: gone ? { ...rest, state: 'backoff', nextStartAt: new Date(0).toISOString(), lastExit: { code: null, signal: null, at: new Date().toISOString() } } : rest });
      }
    }
    writeFileSync(pidFile(this.o.paths.run, SUPERVISOR_NAME), `${process.pid}\n`);
    this.log({ pid: process.pid, adopted: [...this.entries.values()].filter((e) => e.status.adopted).map((e) => e.spec.name) }, 'Supervisor started');
    const onHup = () => this.tick();
    process.on('SIGHUP', onHup);
    this.tick();
    this.timer = setInterval(() => this.tick(), this.o.tickMs ?? 1000);
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    clearInterval(this.timer);
    process.off('SIGHUP', onHup);
    for (const e of this.entries.values()) { e.child?.removeAllListeners('exit'); if (e.killTimer) clearTimeout(e.killTimer); }
    this.writeStatus();
    if (readPid(this.o.paths.run, SUPERVISOR_NAME) === process.pid) rmSync(pidFile(this.o.paths.run, SUPERVISOR_NAME), { force: true });
    this.log({}, 'Supervisor stopped; its processes run on');
  }

  /** One pass: read the specs, act on each, write the status if anything changed. */
  tick(): void {
    const now = Date.now();
    const specs = new Map(readSpecs(this.o.paths).map((s) => [s.name, s]));
    for (const name of [...this.entries.keys()]) {
      if (!specs.has(name)) { this.entries.delete(name); this.dirty = true; }
    }
    for (const spec of specs.values()) {
      let e = this.entries.get(spec.name);
      if (e) e.spec = spec;
      // An adopted process is not our child: notice its exit by polling.
      if (e?.status.adopted && e.status.pid && !isAlive(e.status.pid)) this.exited(e, { code: null, signal: null });
      const pid = readPid(this.o.paths.run, spec.name);
      // Only a pid that runs this spec's command is adopted: a stale pid file may name a reused pid.
      const alive = isAlive(pid) && (e !== undefined || pidMatches(pid!, spec));
      const action = decide(spec, e?.status, alive, now);
      switch (action) {
        case 'none': break;
        case 'adopt':
          e = { spec, status: { name: spec.name, state: 'running', pid: pid!, startedAt: new Date(now).toISOString(), restarts: 0, adopted: true } };
          this.entries.set(spec.name, e);
          this.dirty = true;
          this.log({ process: spec.name, pid }, 'Adopted running process');
          break;
        case 'hold': {
          const { nextStartAt: _n, ...rest } = e?.status ?? { name: spec.name, restarts: 0 };
          this.entries.set(spec.name, { spec, status: { ...rest, state: 'held' } });
          this.dirty = true;
          break;
        }
        case 'start': this.start(spec, e); break;
        case 'stop': this.stop(e!); break;
      }
    }
    if (this.dirty) this.writeStatus();
  }

  private start(spec: SupervisedSpec, e: Entry | undefined): void {
    const { paths } = this.o;
    const log = openSync(join(paths.logs, `${spec.name}.log`), 'a');
    const restarting = e?.status.state === 'backoff'; // a release from hold is a start, not a restart
    if (restarting) writeSync(log, `mk8s-supervisor: ${spec.name} exited (${describeExit(e!.status.lastExit!)}), restart ${e!.status.restarts + 1} after ${(e!.status.delayMs ?? 0) / 1000}s\n`);
    const specArgs = [...cpuProfileArgs(spec), ...spec.args];
    const [cmd, args] = spec.netns ? ['ip', ['netns', 'exec', spec.netns, spec.command, ...specArgs]] : [spec.command, specArgs];
    let child: ChildProcess;
    try {
      // Its own process group: stopping it ends its children too, and the supervisor's exit does not.
      child = spawn(cmd, args, { detached: true, stdio: ['ignore', log, log], env: { ...process.env, ...spec.env } });
    } finally { closeSync(log); }
    const now = new Date().toISOString();
    const { adopted: _a, nextStartAt: _n, pid: _p, ...prev } = e?.status ?? { name: spec.name, restarts: 0 };
    const status: ProcessStatus = {
      ...prev, name: spec.name, state: 'running', startedAt: now, restarts: prev.restarts + (restarting ? 1 : 0),
      ...(child.pid ? { pid: child.pid } : {}),
    };
    const entry: Entry = { spec, status, child };
    this.entries.set(spec.name, entry);
    this.dirty = true;
    child.on('error', (err) => { this.log({ process: spec.name, err: String(err) }, 'Could not start process'); if (!child.pid) this.exited(entry, { code: 127, signal: null }); });
    child.on('exit', (code, sig) => this.exited(entry, { code, signal: sig }));
    if (child.pid) writeFileSync(pidFile(paths.run, spec.name), `${child.pid}\n`);
    this.log({ process: spec.name, pid: child.pid, restarts: status.restarts }, restarting ? 'Restarted process' : 'Started process');
  }

  private stop(e: Entry): void {
    const pid = e.status.pid;
    e.status = { ...e.status, state: 'stopping' };
    this.dirty = true;
    this.log({ process: e.spec.name, pid }, 'Stopping process (hold)');
    if (!pid) return;
    const kill = (sig: NodeJS.Signals) => { try { process.kill(-pid, sig); } catch { try { process.kill(pid, sig); } catch { /* gone */ } } };
    kill('SIGTERM');
    e.killTimer = setTimeout(() => { if (isAlive(pid)) kill('SIGKILL'); }, this.o.stopGraceMs ?? 10_000);
    // An adopted process is polled; make the poll come soon.
    if (e.status.adopted) {
      const poll = setInterval(() => { if (!isAlive(pid)) { clearInterval(poll); this.exited(e, { code: null, signal: null }); } }, 100);
    }
  }

  private exited(e: Entry, exit: { code: number | null; signal: string | null }): void {
    // A stale exit (an entry replaced since) changes nothing.
    if (this.entries.get(e.spec.name) !== e || (e.status.state !== 'running' && e.status.state !== 'stopping')) return;
    if (e.killTimer) clearTimeout(e.killTimer);
    delete e.child;
    const now = Date.now();
    e.status = afterExit(e.status, exit, now, !!e.spec.hold, this.o.policy);
    this.dirty = true;
    this.log({ process: e.spec.name, code: exit.code, signal: exit.signal, state: e.status.state, delayMs: e.status.delayMs }, e.status.state === 'held' ? 'Process stopped' : 'Process exited, restart scheduled');
    this.writeStatus();
    if (e.status.state === 'backoff') setTimeout(() => this.tick(), Math.max(0, Date.parse(e.status.nextStartAt!) - Date.now()) + 5).unref();
  }

  private writeStatus(): void {
    const status: SupervisorStatus = {
      pid: process.pid, startedAt: this.startedAt, updatedAt: new Date().toISOString(),
      processes: Object.fromEntries([...this.entries].sort(([a], [b]) => a.localeCompare(b)).map(([n, e]) => [n, e.status])),
    };
    writeAtomic(this.o.paths.status, `${JSON.stringify(status, null, 2)}\n`);
    this.dirty = false;
  }
}

export function describeExit(x: ExitRecord): string {
  return x.signal ? `signal ${x.signal}` : x.code === null ? 'exit not seen' : `code ${x.code}`;
}

// ---- what `cluster up|down`, `etcd` and `chaos` use -------------------------------------------

const SUPERVISOR_MAIN = fileURLToPath(new URL('./supervisor-main.js', import.meta.url));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the supervisor unless it runs; resolves once it has written its status. */
export async function ensureSupervisor(sp: SupervisorPaths, timeoutMs = 15_000): Promise<number> {
  const running = readPid(sp.run, SUPERVISOR_NAME);
  if (isAlive(running)) return running!;
  mkdirSync(sp.specs, { recursive: true });
  const log = openSync(join(sp.logs, `${SUPERVISOR_NAME}.log`), 'a');
  const main = existsSync(SUPERVISOR_MAIN) ? [SUPERVISOR_MAIN] : ['--import', 'tsx', SUPERVISOR_MAIN.replace(/\.js$/, '.ts')];
  const child = spawn(process.execPath, [...main, '--state-dir', join(sp.dir, '..')], { detached: true, stdio: ['ignore', log, log] });
  closeSync(log);
  child.unref();
  const deadline = Date.now() + timeoutMs;
  while (readSupervisorStatus(sp)?.pid !== child.pid) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the supervisor did not start; see ${join(sp.logs, `${SUPERVISOR_NAME}.log`)}`);
    await sleep(50);
  }
  return child.pid!;
}

/** Tells a running supervisor to read its specs now. */
export function kickSupervisor(sp: SupervisorPaths): void {
  const pid = readPid(sp.run, SUPERVISOR_NAME);
  if (isAlive(pid)) { try { process.kill(pid!, 'SIGHUP'); } catch { /* gone */ } }
}

/** Writes spec (keeping a hold already set unless hold is given) and kicks the supervisor. */
export function superviseSpec(sp: SupervisorPaths, spec: SupervisedSpec): void {
  mkdirSync(sp.specs, { recursive: true });
  writeAtomic(join(sp.specs, `${spec.name}.json`), `${JSON.stringify(spec, null, 2)}\n`);
  kickSupervisor(sp);
}

/**
 * Holds (stops and keeps stopped) or releases the named processes; resolves when the supervisor
 * reports them held (hold) or running again (release).
 */
export async function setHold(sp: SupervisorPaths, names: string[], hold: boolean, timeoutMs = 30_000): Promise<void> {
  for (const name of names) {
    const file = join(sp.specs, `${name}.json`);
    const spec = JSON.parse(readFileSync(file, 'utf8')) as SupervisedSpec;
    const { hold: _h, ...rest } = spec;
    writeAtomic(file, `${JSON.stringify(hold ? { ...rest, hold: true } : rest, null, 2)}\n`);
  }
  kickSupervisor(sp);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const st = readSupervisorStatus(sp);
    const done = names.every((n) => {
      const s = st?.processes[n];
      return hold ? s?.state === 'held' && !isAlive(readPid(sp.run, n)) : s?.state === 'running' && isAlive(s.pid);
    });
    if (done) return;
    if (Date.now() > deadline) throw new Error(`${names.join(', ')} not ${hold ? 'stopped' : 'running'} after ${timeoutMs / 1000}s (supervisor status ${sp.status})`);
    await sleep(100);
  }
}

/** Ends the supervisor (its processes run on); true if one was running. */
export async function stopSupervisor(sp: SupervisorPaths, timeoutMs = 10_000): Promise<boolean> {
  const pid = readPid(sp.run, SUPERVISOR_NAME);
  if (!isAlive(pid)) { rmSync(pidFile(sp.run, SUPERVISOR_NAME), { force: true }); return false; }
  try { process.kill(pid!, 'SIGTERM'); } catch { /* gone */ }
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(50);
  if (isAlive(pid)) { try { process.kill(pid!, 'SIGKILL'); } catch { /* gone */ } }
  rmSync(pidFile(sp.run, SUPERVISOR_NAME), { force: true });
  return true;
}

/**
 * MK8S_CPU_PROF=<regexp of process names> with MK8S_CPU_PROF_DIR=<dir>: those node processes run
 * with --cpu-prof, a profile written to the dir when they exit (a debugging aid for benches; node
 * refuses --cpu-prof in NODE_OPTIONS, hence arguments).
 */
export function cpuProfileArgs(spec: Pick<SupervisedSpec, 'name' | 'command'>, env: NodeJS.ProcessEnv = process.env): string[] {
  const re = env['MK8S_CPU_PROF']; const dir = env['MK8S_CPU_PROF_DIR'];
  if (!re || !dir || spec.command !== process.execPath || !new RegExp(re).test(spec.name)) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${spec.name}.${Date.now()}.cpuprofile`];
}
