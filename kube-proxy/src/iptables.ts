/**
 * IptablesRunner: the proxy's whole view of iptables (upstream util/iptables.Interface, trimmed).
 * The real one execs iptables / iptables-save / iptables-restore in this process' netns, waiting
 * for the xtables lock (-w) rather than failing when another writer holds it.
 */
import { spawn } from 'node:child_process';

export type Table = 'nat' | 'filter';

export interface IptablesRunner {
  /**
   * Applies restore input atomically per table. noflush keeps chains the input does not name.
   * Rejects on failure (nothing applied). Input given as chunks is streamed into one
   * iptables-restore as they come (it parses while the rest is still being computed); if the
   * chunks reject, the restore is killed before its COMMIT and rejects with that error.
   */
  restore(input: string | AsyncIterable<string>, opts: { noflush: boolean }): Promise<void>;
  /** The chain names of a table (from iptables-save). */
  listChains(table: Table): Promise<string[]>;
  /** iptables-save output of the nat and filter tables, in one call. */
  save(): Promise<string>;
  /** Inserts rule at the top of chain unless it is there. Idempotent. Returns whether it inserted. */
  ensureRule(table: Table, chain: string, args: readonly string[]): Promise<boolean>;
  /** Deletes every copy of rule from chain. Idempotent (a missing chain or rule is fine). */
  deleteRule(table: Table, chain: string, args: readonly string[]): Promise<void>;
}

interface Out { code: number; stdout: string; stderr: string }
function exec(cmd: string, args: readonly string[], stdin?: string | AsyncIterable<string>): Promise<Out> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let closed = false;
    let wake: (() => void) | undefined;
    let feedError: unknown;
    p.stdout!.on('data', (b: Buffer) => out.push(b));
    p.stderr!.on('data', (b: Buffer) => err.push(b));
    p.on('error', reject);
    p.on('close', (code) => {
      closed = true;
      wake?.();
      if (feedError !== undefined) reject(feedError);
      else resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
    const sink = p.stdin;
    if (!sink) return;
    sink.on('error', () => undefined);     // the child's exit code tells what went wrong
    if (typeof stdin === 'string') { sink.end(stdin); return; }
    void (async () => {
      try {
        for await (const chunk of stdin!) {
          if (closed) break;
          // Not waiting for 'drain': the producer renders ahead while the pipe empties (the whole
          // input is a few MB at most); one turn of the event loop lets libuv write what fits.
          if (!sink.write(chunk)) await new Promise<void>((r) => { wake = r; setImmediate(r); });
          wake = undefined;
        }
        sink.end();
      } catch (e) {
        // Killed before COMMIT: iptables-restore applies nothing.
        feedError = e;
        p.kill('SIGKILL');
      }
    })();
  });
}

/** Options of {@link ExecIptablesRunner}. */
export interface ExecIptablesRunnerOptions {
  /** Seconds to wait for the xtables lock. @default 5 */
  waitSeconds?: number;
  /** @default 'iptables' (…-save, …-restore alongside) */
  binary?: string;
  /** A command every call runs under, e.g. ['ip', 'netns', 'exec', 'ns1'] (tests, benchmarks). @default [] */
  prefix?: string[];
}

export class ExecIptablesRunner implements IptablesRunner {
  private readonly bin: string;
  private readonly wait: string;
  private readonly prefix: string[];
  constructor(o: ExecIptablesRunnerOptions = {}) { this.bin = o.binary ?? 'iptables'; this.wait = String(o.waitSeconds ?? 5); this.prefix = o.prefix ?? []; }

  private exec(cmd: string, args: readonly string[], stdin?: string | AsyncIterable<string>): Promise<Out> {
    const [head, ...rest] = this.prefix;
    return head ? exec(head, [...rest, cmd, ...args], stdin) : exec(cmd, args, stdin);
  }

  async restore(input: string | AsyncIterable<string>, opts: { noflush: boolean }): Promise<void> {
    const r = await this.exec(`${this.bin}-restore`, ['-w', this.wait, ...(opts.noflush ? ['--noflush'] : [])], input);
    if (r.code !== 0) throw new Error(`iptables-restore failed (${r.code}): ${r.stderr.trim()}`);
  }

  async listChains(table: Table): Promise<string[]> {
    const r = await this.exec(`${this.bin}-save`, ['-t', table]);
    if (r.code !== 0) throw new Error(`iptables-save -t ${table} failed: ${r.stderr.trim()}`);
    return r.stdout.split('\n').filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0] ?? '').filter(Boolean);
  }

  async save(): Promise<string> {
    const r = await this.exec(`${this.bin}-save`, []);
    if (r.code !== 0) throw new Error(`iptables-save failed: ${r.stderr.trim()}`);
    return r.stdout;
  }

  async ensureRule(table: Table, chain: string, args: readonly string[]): Promise<boolean> {
    if ((await this.exec(this.bin, ['-w', this.wait, '-t', table, '-C', chain, ...args])).code === 0) return false;
    const r = await this.exec(this.bin, ['-w', this.wait, '-t', table, '-I', chain, ...args]);
    if (r.code !== 0) throw new Error(`iptables -t ${table} -I ${chain}: ${r.stderr.trim()}`);
    return true;
  }

  async deleteRule(table: Table, chain: string, args: readonly string[]): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const r = await this.exec(this.bin, ['-w', this.wait, '-t', table, '-D', chain, ...args]);
      if (r.code !== 0) return;
    }
  }
}
