import type { IptablesRunner, Table } from '../iptables.js';

/**
 * FakeIptablesRunner records what the proxy asks of iptables and keeps just enough state to
 * answer listChains (chains named in restores, minus the ones deleted) and ensureRule.
 */
export class FakeIptablesRunner implements IptablesRunner {
  /** Every restore input, in order. */
  readonly restores: string[] = [];
  readonly chains: Record<Table, Set<string>> = { nat: new Set(['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING']), filter: new Set(['INPUT', 'FORWARD', 'OUTPUT']) };
  /** "table chain args…" of the jump rules present. */
  readonly rules = new Set<string>();
  /** The `-A` lines restored into each of our chains, by "table chain" (chainRules reads them). */
  readonly chainLines = new Map<string, string[]>();
  /** chainRules calls, in order ("table chain"). */
  readonly chainRuleReads: string[] = [];
  private nextRestoreError: Error | undefined;

  private nextSaveError: Error | undefined;
  /** The next restore rejects with err (and applies nothing). */
  failNextRestore(err: Error): void { this.nextRestoreError = err; }
  /** The next save rejects with err. */
  failNextSave(err: Error): void { this.nextSaveError = err; }

  async restore(chunks: string | AsyncIterable<string>): Promise<void> {
    let input = '';
    if (typeof chunks === 'string') input = chunks;
    else for await (const c of chunks) input += c;
    if (this.nextRestoreError) { const e = this.nextRestoreError; this.nextRestoreError = undefined; throw e; }
    this.restores.push(input);
    let table: Table = 'filter';
    for (const line of input.split('\n')) {
      const jump = /^-I (\S+) 1 (.*)$/.exec(line);
      if (jump) this.rules.add(`${table} ${jump[1]} ${jump[2]!.replace(/"/g, '')}`);
      if (line.startsWith('*')) table = line.slice(1) as Table;
      else if (line.startsWith(':')) { const c = line.slice(1).split(' ')[0]!; this.chains[table].add(c); this.chainLines.set(`${table} ${c}`, []); }
      else if (line.startsWith('-X ')) { const c = line.slice(3).trim(); this.chains[table].delete(c); this.chainLines.delete(`${table} ${c}`); }
      else if (line.startsWith('-A ')) this.chainLines.get(`${table} ${line.split(' ')[1]}`)?.push(line);
    }
  }
  async listChains(table: Table): Promise<string[]> { return [...this.chains[table]]; }
  /** iptables-save style: chains and the jump rules (what the proxier reads back). */
  async save(): Promise<string> {
    if (this.nextSaveError) { const e = this.nextSaveError; this.nextSaveError = undefined; throw e; }
    const out: string[] = [];
    for (const table of ['filter', 'nat'] as const) {
      out.push(`*${table}`, ...[...this.chains[table]].map((c) => `:${c} - [0:0]`));
      for (const r of this.rules) {
        const [t, chain, ...args] = r.split(' ');
        if (t === table) out.push(`-A ${chain} ${args.join(' ')}`);
      }
      out.push('COMMIT');
    }
    return out.join('\n');
  }
  async ensureRule(table: Table, chain: string, args: readonly string[]): Promise<boolean> {
    const k = `${table} ${chain} ${args.join(' ')}`;
    if (this.rules.has(k)) return false;
    this.rules.add(k);
    return true;
  }
  async deleteRule(table: Table, chain: string, args: readonly string[]): Promise<void> { this.rules.delete(`${table} ${chain} ${args.join(' ')}`); }
  async chainRules(table: Table, chain: string): Promise<string[] | undefined> {
    this.chainRuleReads.push(`${table} ${chain}`);
    if (!this.chains[table].has(chain)) return undefined;
    return [`-N ${chain}`, ...(this.chainLines.get(`${table} ${chain}`) ?? [])];
  }
  /** What `iptables -t table -F` does to our chains (they stay, empty); the jumps go too. */
  flushTable(table: Table): void {
    for (const [k, v] of this.chainLines) if (k.startsWith(`${table} `)) v.length = 0;
    for (const r of [...this.rules]) if (r.startsWith(`${table} `)) this.rules.delete(r);
  }
  /** The last restore input, or ''. */
  last(): string { return this.restores.at(-1) ?? ''; }
}
