/**
 * Runs the real kubectl (1.32, on PATH) against a test apiserver, for int tests that check what
 * kubectl users see. Each runner has its own --cache-dir so discovery is fetched cold, as a fresh
 * user's would be.
 */
import { spawn } from 'node:child_process';
import { strict as assert } from 'node:assert';

export interface KubectlRun { code: number; stdout: string; stderr: string }

export interface KubectlRunner {
  /** Runs kubectl with the given args (and optional stdin); never rejects. */
  run(args: readonly string[], input?: string): Promise<KubectlRun>;
  /** Like `run(args)`, for the common case without stdin. */
  kubectl(...args: string[]): Promise<KubectlRun>;
  /** Runs kubectl and asserts it exited 0; returns stdout. */
  ok(...args: string[]): Promise<string>;
}

export function kubectlRunner(opts: { kubeconfig: string | (() => string); cacheDir: string | (() => string); timeoutMs?: number }): KubectlRunner {
  const value = (v: string | (() => string)) => (typeof v === 'function' ? v() : v);
  const run = (args: readonly string[], input?: string) => new Promise<KubectlRun>((resolve) => {
    const child = spawn('kubectl', ['--kubeconfig', value(opts.kubeconfig), '--cache-dir', value(opts.cacheDir), ...args], { timeout: opts.timeoutMs ?? 60_000 });
    let stdout = ''; let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', (err) => resolve({ code: 127, stdout, stderr: stderr + err.message }));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
  const kubectl = (...args: string[]) => run(args);
  const ok = async (...args: string[]) => {
    const r = await run(args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  return { run, kubectl, ok };
}
