/**
 * renderRules: the whole iptables program of one node as iptables-restore input, from the
 * proxy's model alone (upstream proxier.syncProxyRules, as a pure function so it is table-tested).
 * It writes only our chains; the jumps from the built-in chains are ensured separately
 * (see {@link JUMP_RULES}) because iptables-restore --noflush cannot add them idempotently.
 */
import { cidrContains, parseCidr } from '@mk8s/cni';
import { endpointChain, externalChain, serviceChain } from './chain-names.js';
import { usableEndpoints, type EndpointInfo, type ServicePortInfo } from './service-state.js';

/** The fixed chains kube-proxy owns, per table. */
export const NAT_CHAINS = ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ'] as const;
export const FILTER_CHAINS = ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD'] as const;
/** Prefixes of per-service chains (created and deleted as Services come and go). */
export const DYNAMIC_PREFIXES = ['KUBE-SVC-', 'KUBE-SEP-', 'KUBE-EXT-'] as const;

/** Whether a chain name is one kube-proxy owns. */
export function isOwnedChain(table: 'nat' | 'filter', chain: string): boolean {
  if (table === 'nat') return (NAT_CHAINS as readonly string[]).includes(chain) || DYNAMIC_PREFIXES.some((p) => chain.startsWith(p));
  return (FILTER_CHAINS as readonly string[]).includes(chain);
}

/** A jump from a built-in chain into ours (upstream iptablesJumpChains). */
export interface JumpRule { table: 'nat' | 'filter'; chain: string; args: string[] }

const NEW = ['-m', 'conntrack', '--ctstate', 'NEW'];
export const JUMP_RULES: readonly JumpRule[] = [
  { table: 'filter', chain: 'INPUT', args: [...NEW, '-m', 'comment', '--comment', 'kubernetes externally-visible service portals', '-j', 'KUBE-EXTERNAL-SERVICES'] },
  { table: 'filter', chain: 'FORWARD', args: [...NEW, '-m', 'comment', '--comment', 'kubernetes externally-visible service portals', '-j', 'KUBE-EXTERNAL-SERVICES'] },
  { table: 'filter', chain: 'FORWARD', args: [...NEW, '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'] },
  { table: 'filter', chain: 'OUTPUT', args: [...NEW, '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'] },
  { table: 'filter', chain: 'FORWARD', args: ['-m', 'comment', '--comment', 'kubernetes forwarding rules', '-j', 'KUBE-FORWARD'] },
  { table: 'nat', chain: 'PREROUTING', args: ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'] },
  { table: 'nat', chain: 'OUTPUT', args: ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'] },
  { table: 'nat', chain: 'POSTROUTING', args: ['-m', 'comment', '--comment', 'kubernetes postrouting rules', '-j', 'KUBE-POSTROUTING'] },
];

/** The restore-input form of a jump: quoted where iptables-restore needs it. */
function jumpArgs(j: JumpRule): string {
  return j.args.map((a) => (a.includes(' ') ? `"${a}"` : a)).join(' ');
}

/**
 * missingJumps reads iptables-save output and returns the jump rules it lacks (a rule counts as
 * present when its chain has a rule with the same comment jumping to the same target).
 */
export function missingJumps(saved: string): JumpRule[] {
  const tables = new Map<string, string[]>();
  let table = '';
  for (const line of saved.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    else if (line.startsWith('-A ')) (tables.get(table) ?? tables.set(table, []).get(table)!).push(line);
  }
  return JUMP_RULES.filter((j) => {
    const target = j.args[j.args.length - 1]!;
    const comment = j.args[j.args.indexOf('--comment') + 1]!;
    return !(tables.get(j.table) ?? []).some((l) => l.startsWith(`-A ${j.chain} `) && l.endsWith(`-j ${target}`) && l.includes(comment));
  });
}

/** withJumps adds `-I <chain> 1 …` lines for jumps to a restore input (our chains exist by then). */
export function withJumps(text: string, jumps: readonly JumpRule[]): string {
  if (jumps.length === 0) return text;
  const out: string[] = [];
  let table = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1);
    if (line === 'COMMIT') for (const j of jumps) if (j.table === table) out.push(`-I ${j.chain} 1 ${jumpArgs(j)}`);
    out.push(line);
  }
  return out.join('\n');
}

/** Input of {@link renderRules}. */
export interface RulesInput {
  services: readonly ServicePortInfo[];
  /** By `${servicePortName}/${protocol}`, as endpointsByServicePort builds it. */
  endpoints: ReadonlyMap<string, readonly EndpointInfo[]>;
  /** The pod network: traffic from outside it to a cluster IP is masqueraded. */
  clusterCidr: string;
  /** Per-service chains now in the kernel's nat table; those no longer wanted are deleted. */
  existingNatChains?: Iterable<string>;
  /** @default 14 (mark 0x4000, upstream's default masquerade bit) */
  masqueradeBit?: number;
}

/** The restore input and what it holds. */
export interface RenderedRules {
  /** iptables-restore input (filter then nat), for --noflush. */
  text: string;
  /** Every nat chain the program keeps (fixed + per service). */
  natChains: Set<string>;
  /** Number of rules per table (metrics). */
  ruleCounts: { filter: number; nat: number };
  /** The nat rules of each chain (for incremental restores). */
  natByChain: Map<string, string[]>;
  /** The whole filter section ('*filter' … 'COMMIT'); small, always written in full. */
  filterSection: string[];
}

/** Upstream's probability text: %0.10f of 1/(n-i). */
function probability(n: number): string { return (1 / n).toFixed(10); }

function proto(sp: ServicePortInfo): string[] {
  const p = sp.protocol.toLowerCase();
  return ['-m', p, '-p', p];
}

function comment(text: string): string[] { return ['-m', 'comment', '--comment', text.includes(' ') ? `"${text}"` : text]; }

export function renderRules(input: RulesInput): RenderedRules {
  const mark = `0x${(1 << (input.masqueradeBit ?? 14)).toString(16)}`;
  const markMask = `${mark}/${mark}`;
  const filter: string[] = [];
  const nat: string[] = [];
  const natDynamic: string[] = [];
  const natChains = new Set<string>(NAT_CHAINS);
  const podNet = parseCidr(input.clusterCidr);
  const rule = (to: string[], chain: string, ...args: string[]) => to.push(['-A', chain, ...args].join(' '));

  for (const sp of input.services) {
    const all = input.endpoints.get(`${sp.name}/${sp.protocol}`) ?? [];
    const eps = usableEndpoints(all);
    const dst = ['-d', `${sp.clusterIP}/32`, '--dport', String(sp.port)];
    if (eps.length === 0) {
      // Refused at once rather than black-holed: the client sees ECONNREFUSED (upstream "has no endpoints").
      rule(filter, 'KUBE-SERVICES', ...comment(`${sp.name} has no endpoints`), ...proto(sp), ...dst, '-j', 'REJECT');
      if (sp.nodePort) rule(filter, 'KUBE-EXTERNAL-SERVICES', ...comment(`${sp.name} has no endpoints`), '-m', 'addrtype', '--dst-type', 'LOCAL', ...proto(sp), '--dport', String(sp.nodePort), '-j', 'REJECT');
      continue;
    }
    const svc = serviceChain(sp.name, sp.protocol);
    natChains.add(svc);
    natDynamic.push(svc);
    rule(nat, 'KUBE-SERVICES', ...comment(`${sp.name} cluster IP`), ...proto(sp), ...dst, '-j', svc);
    // Traffic to the cluster IP from outside the pod network (the node itself, the host) is
    // masqueraded so replies come back through this node's conntrack.
    rule(nat, svc, ...comment(`${sp.name} cluster IP`), ...proto(sp), ...dst, '!', '-s', input.clusterCidr, '-j', 'KUBE-MARK-MASQ');
    if (sp.nodePort) {
      const ext = externalChain(sp.name, sp.protocol);
      natChains.add(ext);
      natDynamic.push(ext);
      rule(nat, 'KUBE-NODEPORTS', ...comment(sp.name), ...proto(sp), '--dport', String(sp.nodePort), '-j', ext);
      rule(nat, ext, ...comment(`masquerade traffic for ${sp.name} external destinations`), '-j', 'KUBE-MARK-MASQ');
      rule(nat, ext, '-j', svc);
    }
    const seps = eps.map((e) => ({ e, chain: endpointChain(sp.name, sp.protocol, `${e.ip}:${e.port}`) }));
    if (sp.affinityTimeoutSeconds !== undefined) {
      for (const { e, chain } of seps) {
        rule(nat, svc, ...comment(`${sp.name} -> ${e.ip}:${e.port}`), '-m', 'recent', '--name', chain, '--rcheck', '--seconds', String(sp.affinityTimeoutSeconds), '--reap', '-j', chain);
      }
    }
    seps.forEach(({ e, chain }, i) => {
      const n = seps.length - i;
      const stat = n > 1 ? ['-m', 'statistic', '--mode', 'random', '--probability', probability(n)] : [];
      rule(nat, svc, ...comment(`${sp.name} -> ${e.ip}:${e.port}`), ...stat, '-j', chain);
    });
    for (const { e, chain } of seps) {
      natChains.add(chain);
      natDynamic.push(chain);
      if (cidrContains(podNet, e.ip)) {
        // Hairpin: a pod reaching itself through the Service must see the reply come from the gateway.
        rule(nat, chain, ...comment(sp.name), '-s', `${e.ip}/32`, '-j', 'KUBE-MARK-MASQ');
      } else {
        // An endpoint off the pod network (the apiserver on the host for default/kubernetes) cannot
        // route replies to pod IPs (the host blackholes them): masquerade to the node's IP.
        // A deviation from upstream, whose hosts route pod CIDRs back.
        rule(nat, chain, ...comment(sp.name), '-j', 'KUBE-MARK-MASQ');
      }
      const affinity = sp.affinityTimeoutSeconds !== undefined ? ['-m', 'recent', '--name', chain, '--set'] : [];
      rule(nat, chain, ...comment(sp.name), ...proto(sp), ...affinity, '-j', 'DNAT', '--to-destination', `${e.ip}:${e.port}`);
    }
  }
  rule(nat, 'KUBE-SERVICES', ...comment('kubernetes service nodeports; NOTE: this must be the last rule in this chain'), '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'KUBE-NODEPORTS');
  rule(nat, 'KUBE-POSTROUTING', '-m', 'mark', '!', '--mark', markMask, '-j', 'RETURN');
  rule(nat, 'KUBE-POSTROUTING', '-j', 'MARK', '--xor-mark', mark);
  rule(nat, 'KUBE-POSTROUTING', ...comment('kubernetes service traffic requiring SNAT'), '-j', 'MASQUERADE', '--random-fully');
  rule(nat, 'KUBE-MARK-MASQ', '-j', 'MARK', '--or-mark', mark);
  rule(filter, 'KUBE-FORWARD', '-m', 'conntrack', '--ctstate', 'INVALID', '-j', 'DROP');
  rule(filter, 'KUBE-FORWARD', ...comment('kubernetes forwarding rules'), '-m', 'mark', '--mark', markMask, '-j', 'ACCEPT');
  rule(filter, 'KUBE-FORWARD', ...comment('kubernetes forwarding conntrack rule'), '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'ACCEPT');

  const natByChain = new Map<string, string[]>();
  for (const c of [...NAT_CHAINS, ...natDynamic]) natByChain.set(c, []);
  for (const l of nat) natByChain.get(l.slice(3, l.indexOf(' ', 3)))?.push(l);
  const stale = [...new Set(input.existingNatChains ?? [])].filter((c) => DYNAMIC_PREFIXES.some((p) => c.startsWith(p)) && !natChains.has(c)).sort();
  const filterSection = ['*filter', ...FILTER_CHAINS.map((c) => `:${c} - [0:0]`), ...filter, 'COMMIT'];
  const lines: string[] = [...filterSection, '*nat'];
  for (const c of [...NAT_CHAINS, ...natDynamic]) lines.push(`:${c} - [0:0]`);
  // Declaring a stale chain flushes it (dropping its jumps to other stale chains); then it can go.
  for (const c of stale) lines.push(`:${c} - [0:0]`);
  lines.push(...nat);
  for (const c of stale) lines.push(`-X ${c}`);
  lines.push('COMMIT', '');
  return { text: lines.join('\n'), natChains, ruleCounts: { filter: filter.length, nat: nat.length }, natByChain, filterSection };
}

/**
 * incrementalRestoreInput: what to restore when prev is what the kernel holds (upstream's partial
 * sync): the filter table and the fixed nat chains in full, per-service chains only when new or
 * changed, and the ones gone deleted. Unchanged per-service chains are not named, so --noflush
 * leaves them alone: a one-Service change costs a few chains, not the whole table.
 */
export function incrementalRestoreInput(prev: RenderedRules, next: RenderedRules): string {
  const same = (a: string[] | undefined, b: string[] | undefined) => a !== undefined && b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
  const write: string[] = [];
  for (const [c, rules] of next.natByChain) {
    if ((NAT_CHAINS as readonly string[]).includes(c) || !same(prev.natByChain.get(c), rules)) write.push(c);
  }
  const gone = [...prev.natChains].filter((c) => !next.natChains.has(c)).sort();
  const lines = [...next.filterSection, '*nat'];
  for (const c of [...write, ...gone]) lines.push(`:${c} - [0:0]`);
  for (const c of write) lines.push(...(next.natByChain.get(c) ?? []));
  for (const c of gone) lines.push(`-X ${c}`);
  lines.push('COMMIT', '');
  return lines.join('\n');
}

/** renderCleanup: restore input that deletes every chain of ours found in the given chain lists. */
export function renderCleanup(existing: { nat: Iterable<string>; filter: Iterable<string> }): string {
  const lines: string[] = [];
  for (const [table, chains] of [['filter', existing.filter], ['nat', existing.nat]] as const) {
    const owned = [...new Set(chains)].filter((c) => isOwnedChain(table, c)).sort();
    lines.push(`*${table}`, ...owned.map((c) => `:${c} - [0:0]`), ...owned.map((c) => `-X ${c}`), 'COMMIT');
  }
  return `${lines.join('\n')}\n`;
}
