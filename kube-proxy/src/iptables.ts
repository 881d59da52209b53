/**
 * IptablesRunner: the proxy's whole view of iptables (upstream util/iptables.Interface, trimmed).
 * The real one execs iptables / iptables-save / iptables-restore in this process' netns, waiting
 * for the xtables lock (-w) rather than failing when another writer holds it.
 */
import { spawn, type ChildProcess } from 'node:child_process';

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
  /**
   * The rules of one chain as `iptables -S` prints them (`-N chain` first), or undefined when the
   * chain does not exist. Read-only and cheap (one chain, not the table): the proxier's periodic
   * check that its rules are still there. Rejects when iptables cannot be run.
   */
  chainRules?(table: Table, chain: string): Promise<string[] | undefined>;
  /** Releases what the runner keeps between calls (a waiting iptables-restore). Idempotent. */
  close?(): void;
}

interface Out { code: number; stdout: string; stderr: string }

/** A started child whose output is being collected; `result` settles when it has exited and its pipes closed. */
interface Started { child: ChildProcess; result: Promise<Out>; exited: boolean; feedError?: unknown }

function start(cmd: string, args: readonly string[], withStdin: boolean): Started {
  const child = spawn(cmd, args, { stdio: [withStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  const s: Started = { child, exited: false, result: undefined as unknown as Promise<Out> };
  s.result = new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.stdin?.on('error', () => undefined);     // the child's exit code tells what went wrong
    child.on('error', (e) => { s.exited = true; reject(e); });
    child.on('exit', () => { s.exited = true; });
    child.on('close', (code) => {
      s.exited = true;
      if (s.feedError !== undefined) reject(s.feedError);
      else resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
  });
  s.result.catch(() => undefined);     // a spare that is never used must not be an unhandled rejection
  return s;
}

/** Writes stdin into a started child and ends it; chunks are written as they come. */
function feed(s: Started, stdin: string | AsyncIterable<string>): void {
  const sink = s.child.stdin!;
  if (typeof stdin === 'string') { sink.end(stdin); return; }
  void (async () => {
    try {
      for await (const chunk of stdin) {
        if (s.exited) break;
        // Not waiting for 'drain': the producer renders ahead while the pipe empties (the whole
        // input is a few MB at most); one turn of the event loop lets libuv write what fits.
        if (!sink.write(chunk)) await new Promise<void>((r) => setImmediate(r));
      }
      sink.end();
    } catch (e) {
      // Killed before COMMIT: iptables-restore applies nothing.
      s.feedError = e;
      s.child.kill('SIGKILL');
    }
  })();
}

function exec(cmd: string, args: readonly string[], stdin?: string | AsyncIterable<string>): Promise<Out> {
  const s = start(cmd, args, stdin !== undefined);
  if (stdin !== undefined) feed(s, stdin);
  return s.result;
}

/** ref/unref of a child's handles: an idle spare must not keep the process alive. */
type Refable = { ref?: () => void; unref?: () => void };
function setRef(c: ChildProcess, on: boolean): void {
  for (const h of [c, c.stdin, c.stdout, c.stderr] as Refable[]) { if (h) (on ? h.ref : h.unref)?.call(h); }
}

/** Options of {@link ExecIptablesRunner}. */
export interface ExecIptablesRunnerOptions {
  /** Seconds to wait for the xtables lock. @default 5 */
  waitSeconds?: number;
  /** @default 'iptables' (…-save, …-restore alongside) */
  binary?: string;
  /** A command every call runs under, e.g. ['ip', 'netns', 'exec', 'ns1'] (tests, benchmarks). @default [] */
  prefix?: string[];
  /**
   * Keep the next iptables-restore started and waiting on stdin, so a sync only writes its input:
   * fork + exec + dynamic linking (most of a small restore's time on a busy machine, and a fork
   * of this whole process) happen after the previous restore, not on the change's path. The
   * waiting process holds no lock (nft takes none; legacy takes the xtables lock only once it
   * has read a table) and applies nothing unless it reads a COMMIT. @default true
   */
  prespawn?: boolean;
}

/** A started iptables-restore waiting for its input (see {@link ExecIptablesRunnerOptions.prespawn}). */
interface Spare { started: Started; noflush: boolean }

export class ExecIptablesRunner implements IptablesRunner {
  private readonly bin: string;
  private readonly wait: string;
  private readonly prefix: string[];
  private readonly prespawn: boolean;
  private spare: Spare | undefined;
  private closed = false;
  constructor(o: ExecIptablesRunnerOptions = {}) {
    this.bin = o.binary ?? 'iptables';
    this.wait = String(o.waitSeconds ?? 5);
    this.prefix = o.prefix ?? [];
    this.prespawn = o.prespawn ?? true;
  }

  private command(cmd: string, args: readonly string[]): [string, string[]] {
    const [head, ...rest] = this.prefix;
    return head ? [head, [...rest, cmd, ...args]] : [cmd, [...args]];
  }

  private exec(cmd: string, args: readonly string[], stdin?: string | AsyncIterable<string>): Promise<Out> {
    return exec(...this.command(cmd, args), stdin);
  }

  private restoreArgs(noflush: boolean): string[] { return ['-w', this.wait, ...(noflush ? ['--noflush'] : [])]; }

  /** The waiting restore for these flags if it is still alive, else a new one. */
  private takeRestore(noflush: boolean): Started {
    const spare = this.spare;
    this.spare = undefined;
    if (spare && spare.noflush === noflush && !spare.started.exited) {
      setRef(spare.started.child, true);
      return spare.started;
    }
    if (spare) spare.started.child.stdin?.end();
    return start(...this.command(`${this.bin}-restore`, this.restoreArgs(noflush)), true);
  }

  /** Starts the next restore, after the current one finished: its fork must not compete with the restore. */
  private refill(noflush: boolean): void {
    if (!this.prespawn || this.closed || this.spare) return;
    setImmediate(() => {
      if (this.closed || this.spare) return;
      const started = start(...this.command(`${this.bin}-restore`, this.restoreArgs(noflush)), true);
      setRef(started.child, false);
      this.spare = { started, noflush };
    });
  }

  async restore(input: string | AsyncIterable<string>, opts: { noflush: boolean }): Promise<void> {
    const s = this.takeRestore(opts.noflush);
    feed(s, input);
    let r: Out;
    try { r = await s.result; } finally { this.refill(opts.noflush); }
    if (r.code !== 0) throw new Error(`iptables-restore failed (${r.code}): ${r.stderr.trim()}`);
  }

  close(): void {
    this.closed = true;
    // EOF before any COMMIT: the waiting restore exits having applied nothing.
    this.spare?.started.child.stdin?.end();
    this.spare = undefined;
  }

  async chainRules(table: Table, chain: string): Promise<string[] | undefined> {
    const r = await this.exec(this.bin, ['-w', this.wait, '-t', table, '-S', chain]);
    if (r.code === 0) return r.stdout.split('\n').filter(Boolean);
    // iptables exits 1 for a missing chain; anything else (2: bad usage, 4: resource problem) is a failure.
    if (r.code === 1) return undefined;
    throw new Error(`iptables -t ${table} -S ${chain} failed (${r.code}): ${r.stderr.trim()}`);
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
