import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** A long-running process of the local cluster, tracked by a pid file under .mk8s/run. */
export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  /** Network namespace to run in (via `ip netns exec`), or undefined for the host. */
  netns?: string;
  env?: Record<string, string>;
  /**
   * Start it again whenever it exits (what the kubelet does for upstream's static control-plane
   * pods): a controller-manager or scheduler that loses its leader lease exits, as upstream's do.
   * The pid file then names the supervising shell; stopping the process group ends both.
   */
  restart?: boolean;
}

/**
 * True when pid's command line is spec's (its command and first two arguments): a pid file left
 * from an earlier run may name a reused pid of an unrelated process, which must never be adopted
 * or signalled.
 */
export function pidMatches(pid: number, spec: { command: string; args: readonly string[] }): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.some((a) => basename(a) === basename(spec.command)) && spec.args.slice(0, 2).every((a) => argv.includes(a));
  } catch { return false; }
}

export function pidFile(runDir: string, name: string): string { return join(runDir, `${name}.pid`); }

export function readPid(runDir: string, name: string): number | undefined {
  const f = pidFile(runDir, name);
  if (!existsSync(f)) return undefined;
  const pid = Number(readFileSync(f, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * True while pid names a live process. A zombie is dead: PID 1 on these machines reaps orphans
 * only now and then, and a stopped component must not look alive until it does.
 */
export function isAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try { process.kill(pid, 0); } catch { return false; }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch { return true; }
}

/** Starts spec detached, output appended to .mk8s/logs/<name>.log; returns its pid. */
export function startProcess(spec: ProcessSpec, dirs: { run: string; logs: string }): number {
  const log = openSync(join(dirs.logs, `${spec.name}.log`), 'a');
  let [cmd, args] = spec.netns ? ['ip', ['netns', 'exec', spec.netns, spec.command, ...spec.args]] : [spec.command, spec.args];
  if (spec.restart) {
    // The shell outlives its child on SIGTERM (trap: wait for it), so a stop that waits for the pid waits for the component.
    args = ['-c', 'trap \'kill $c 2>/dev/null; wait $c; exit 0\' TERM INT; while :; do "$@" & c=$!; wait $c; echo "mk8s: $0 exited ($?), restarting in 1s" >&2; sleep 1; done', spec.name, cmd, ...args];
    cmd = 'sh';
  }
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', log, log], env: { ...process.env, ...spec.env } });
  closeSync(log);
  if (!child.pid) throw new Error(`could not start ${spec.name}`);
  child.unref();
  writeFileSync(pidFile(dirs.run, spec.name), `${child.pid}\n`);
  return child.pid;
}

/** Sends SIGTERM, waits up to graceMs, then SIGKILL. Removes the pid file. */
export async function stopProcess(runDir: string, name: string, graceMs = 10_000): Promise<boolean> {
  const pid = readPid(runDir, name);
  let was = false;
  if (isAlive(pid)) {
    was = true;
    // The process group: a component may have children (e.g. CNI plugin runs), end them too.
    try { process.kill(-pid!, 'SIGTERM'); } catch { try { process.kill(pid!, 'SIGTERM'); } catch { /* gone */ } }
    const deadline = Date.now() + graceMs;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(pid)) { try { process.kill(-pid!, 'SIGKILL'); } catch { try { process.kill(pid!, 'SIGKILL'); } catch { /* gone */ } } }
  }
  rmSync(pidFile(runDir, name), { force: true });
  return was;
}

/** Runs a short command synchronously; throws with its stderr on failure unless allowFail. */
export function run(cmd: string, args: string[], opts: { allowFail?: boolean; input?: string } = {}): { ok: boolean; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input: opts.input });
  const ok = r.status === 0;
  if (!ok && !opts.allowFail) throw new Error(`${cmd} ${args.join(' ')}: ${(r.stderr || r.stdout || String(r.error ?? '')).trim()}`);
  return { ok, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
