/**
 * Helpers for e2e tests against the cluster `mkctl cluster up` started: the kubeconfig, the real
 * kubectl with a fresh discovery cache, and polling with a deadline (never fixed sleeps).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(process.env['MK8S_ROOT'] ?? join(import.meta.dirname, '..', '..', '..'));
export const KUBECONFIG = process.env['KUBECONFIG'] ?? join(ROOT, '.mk8s', 'kubeconfig');
const cacheDir = mkdtempSync(join(tmpdir(), 'mk8s-kubectl-cache-'));

export interface RunResult { code: number; stdout: string; stderr: string }

/** Runs the real kubectl against the cluster. */
export function kubectl(args: string[], opts: { input?: string; timeoutMs?: number } = {}): RunResult {
  const r = spawnSync('kubectl', ['--kubeconfig', KUBECONFIG, '--cache-dir', cacheDir, ...args], {
    encoding: 'utf8', input: opts.input, timeout: opts.timeoutMs ?? 60_000,
  });
  const out = { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  // With ServiceAccount admission on, a pod in a brand-new namespace is refused until the
  // serviceaccount controller has made `default` (as in Kubernetes): wait for it here, once.
  if (out.code === 0) for (const m of out.stdout.matchAll(/^namespace\/(\S+) created$/gm)) waitForDefaultServiceAccount(m[1]!);
  return out;
}

/**
 * kubectl without blocking this process: for tests that serve something the cluster calls back
 * (admission webhooks, aggregated API servers), whose servers must keep answering meanwhile.
 */
export function kubectlAsync(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', ['--kubeconfig', KUBECONFIG, '--cache-dir', cacheDir, ...args], { timeout: opts.timeoutMs ?? 60_000 });
    let stdout = ''; let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', (err) => resolve({ code: 127, stdout, stderr: stderr + err.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** kubectlAsync that must succeed; returns stdout. */
export async function kubectlAsyncOk(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<string> {
  const r = await kubectlAsync(args, opts);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

/**
 * Polls (synchronously, with a deadline) until the namespace's `default` ServiceAccount exists,
 * then briefly for the kube-root-ca.crt ConfigMap the token volume reads (published at the same
 * time). Gives up quietly at the deadlines: a cluster without those controllers never gets them.
 */
export function waitForDefaultServiceAccount(namespace: string, timeoutMs = 30_000): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const poll = (args: string[], ms: number): boolean => {
    const deadline = Date.now() + ms;
    for (;;) {
      const r = spawnSync('kubectl', ['--kubeconfig', KUBECONFIG, '--cache-dir', cacheDir, '-n', namespace, 'get', ...args, '-o', 'name'], { encoding: 'utf8', timeout: 10_000 });
      if (r.status === 0) return true;
      if (Date.now() > deadline) return false;
      Atomics.wait(pause, 0, 0, 200);
    }
  };
  if (poll(['serviceaccount', 'default'], timeoutMs)) poll(['configmap', 'kube-root-ca.crt'], 5_000);
}

/** kubectl that must succeed; returns stdout. */
export function kubectlOk(args: string[], opts: { input?: string; timeoutMs?: number } = {}): string {
  const r = kubectl(args, opts);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** Starts a long-running kubectl (e.g. get -w); collect its output until stop(). */
export function kubectlStream(args: string[]): { output: () => string; stop: () => Promise<void> } {
  const child = spawn('kubectl', ['--kubeconfig', KUBECONFIG, '--cache-dir', cacheDir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  return {
    output: () => out,
    stop: () => new Promise<void>((r) => { if (child.exitCode !== null) return r(); child.once('exit', () => r()); child.kill('SIGTERM'); }),
  };
}

/** Polls cond until it returns a truthy value or the deadline passes. */
export async function waitFor<T>(cond: () => T | Promise<T>, o: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v as NonNullable<T>;
    } catch (err) { last = err; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${o.what ?? 'condition'}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 200));
  }
}

/** A unique namespace name for one test file. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
}
