/**
 * Helpers of the chaos tests (test/chaos/*.chaos.test.ts, run by `make chaos` only): FIGURE lines
 * with their goal, `mkctl` (sync and async, for faults that last while the test measures), the
 * supervisor's record of each process (pid, restarts) and etcd's leader, all through the files and
 * commands a user has. Cluster access (kubeconfig, kubectl, waitFor) is test/e2e/lib/cluster.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClientset, loadKubeConfig, restConfigFromKubeConfig, type Clientset } from '@mk8s/client';
import { KUBECONFIG, ROOT } from '../../e2e/lib/cluster.js';

export { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor, waitForDefaultServiceAccount } from '../../e2e/lib/cluster.js';

/**
 * Prints one figure for `make chaos` to summarise: `FIGURE <Tn> <what>: <value> (goal <goal>)`.
 * The goal is beside the value so the summary reads alone; the test asserts it separately.
 */
export function figure(id: string, what: string, value: string | number, goal?: string, extra?: string): void {
  console.log(`FIGURE ${id} ${what}: ${value}${goal !== undefined ? ` (goal ${goal})` : ''}${extra ? `; ${extra}` : ''}`);
}

export function adminClient(userAgent: string): Clientset {
  return createClientset({ restConfig: restConfigFromKubeConfig(loadKubeConfig(KUBECONFIG)), userAgent, qps: 0 });
}

export interface MkctlResult { code: number | null; out: string }

const MKCTL = () => [join(ROOT, 'mkctl/dist/main.js')];

/** mkctl, waiting for it (for short commands: etcd status/compact, chaos kill without --watch). */
export function mkctl(args: string[], timeoutMs = 180_000): MkctlResult {
  const r = spawnSync(process.execPath, [...MKCTL(), ...args], { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, MK8S_ROOT: ROOT } });
  return { code: r.status, out: (r.stdout ?? '') + (r.stderr ?? '') };
}

/** mkctl in the background (a fault that lasts, `chaos ... --watch`); resolves when it exits. */
export function mkctlAsync(args: string[]): { done: Promise<MkctlResult>; output: () => string } {
  const child = spawn(process.execPath, [...MKCTL(), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MK8S_ROOT: ROOT } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const done = new Promise<MkctlResult>((r) => child.on('close', (code) => r({ code, out })));
  return { done, output: () => out };
}

/** The supervisor's record of one process (.mk8s/supervisor/status.json, mkctl/src/cluster/supervisor.ts). */
export interface ProcessRecord { state: string; pid?: number; restarts: number; lastExit?: { code: number | null; signal: string | null; at: string } }

export function supervised(): Record<string, ProcessRecord> {
  try {
    return (JSON.parse(readFileSync(join(ROOT, '.mk8s', 'supervisor', 'status.json'), 'utf8')) as { processes: Record<string, ProcessRecord> }).processes;
  } catch { return {}; }
}

/** The apiserver processes the supervisor runs (`apiserver`, or `apiserver-N` with --apiservers N). */
export function apiserverNames(): string[] {
  return Object.keys(supervised()).filter((n) => /^apiserver(-\d+)?$/.test(n)).sort();
}

/** The etcd leader's member name and the reachable members, from `mkctl etcd status`'s table. */
export function etcdMembers(): { leader?: string; reachable: string[] } {
  const rows = [...mkctl(['etcd', 'status'], 60_000).out.matchAll(/^(etcd-\d)\s.*$/gm)];
  const leader = rows.find((m) => /\strue\s+\d+\s+\d+\s+\d+\s*$/.test(m[0]))?.[1];
  return { ...(leader ? { leader } : {}), reachable: rows.filter((m) => !/UNREACHABLE/.test(m[0])).map((m) => m[1]!) };
}

/** The 99th percentile (nearest rank) of a list of numbers; 0 for none. */
export function p99(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)]!;
}
