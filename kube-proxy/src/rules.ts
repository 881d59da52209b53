/**
 * renderRules: the whole iptables program of one node as iptables-restore input, from the
 * proxy's model alone (upstream proxier.syncProxyRules, as a pure function so it is table-tested).
 * It writes only our chains; the jumps from the built-in chains are ensured separately
 * (see {@link JUMP_RULES}) because iptables-restore --noflush cannot add them idempotently.
 */
import { cidrContains, parseCidr, type Cidr } from '@mk8s/cni';
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
  /** @default whether the endpoints of all service ports number more than {@link LARGE_CLUSTER_ENDPOINTS_THRESHOLD} */
  largeClusterMode?: boolean;
}

/**
 * Upstream's largeClusterEndpointsThreshold: above this many endpoints (all of them, ready or
 * not, over every service port) the per-endpoint rules carry no comments.
 */
export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

/** Whether a program with this many endpoints is rendered in large-cluster mode. */
export function isLargeCluster(totalEndpoints: number): boolean { return totalEndpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD; }

/** What every service port's rules depend on besides the port itself. */
export interface RuleContext {
  clusterCidr: string;
  podNet: Cidr;
  /** e.g. 0x4000 */
  mark: string;
  /**
   * Upstream's largeClusterMode: no comments on the KUBE-SVC → KUBE-SEP rules nor in the KUBE-SEP
   * chains. Besides a third less restore input, it matters on the nft backend: every commit that
   * adds a rule makes the kernel re-validate every rule reachable from the built-in chains
   * (nft_table_validate), and each `-m comment` is one more xt match to walk; measured on
   * 1,000 Services × 10 endpoints (perf stat), a one-endpoint restore's CPU drops from 50 to 38 ms.
   */
  largeClusterMode: boolean;
}

export function ruleContext(clusterCidr: string, masqueradeBit = 14, largeClusterMode = false): RuleContext {
  return { clusterCidr, podNet: parseCidr(clusterCidr), mark: `0x${(1 << masqueradeBit).toString(16)}`, largeClusterMode };
}

/**
 * One service port's share of the program, as restore-input text ("…\n"-terminated lines, '' for
 * none). Immutable: a sync re-renders only the ports whose Service or EndpointSlices changed and
 * reuses the others' text as it is (upstream's partial sync).
 */
export interface ServicePortRules {
  /** `${servicePortName}/${protocol}`, the key endpointsByServicePort uses. */
  key: string;
  /** The Service ("ns/name"), the service port name ("ns/name:port") and protocol: program order sorts by them. */
  service: string;
  name: string;
  protocol: string;
  /** Its REJECT rules in filter KUBE-SERVICES / KUBE-EXTERNAL-SERVICES (no endpoints). */
  filter: string;
  /** Its rule in nat KUBE-SERVICES. */
  natServices: string;
  /** Its rule in nat KUBE-NODEPORTS. */
  natNodePorts: string;
  /** Its own nat chains (KUBE-SVC, KUBE-EXT, KUBE-SEP…) in declaration order, with their rules. */
  chains: { name: string; rules: string }[];
  ruleCounts: { filter: number; nat: number };
}

/** The text of the fixed chains whose content depends on the service ports (compared per sync). */
export interface FixedRules {
  /** The whole filter section, '*filter' to 'COMMIT\n'. */
  filter: string;
  /** nat KUBE-SERVICES rules. */
  natServices: string;
  /** nat KUBE-NODEPORTS rules. */
  natNodePorts: string;
}

/** The restore input and what it holds. */
export interface RenderedRules {
  /** iptables-restore input (nat then filter), for --noflush. */
  text: string;
  /** Every nat chain the program keeps (fixed + per service). */
  natChains: Set<string>;
  /** Number of rules per table (metrics). */
  ruleCounts: { filter: number; nat: number };
  /** Each service port's rules by key (incremental restores). */
  ports: Map<string, ServicePortRules>;
  fixed: FixedRules;
}

/** Upstream's probability text: %0.10f of 1/(n-i). */
function probability(n: number): string { return (1 / n).toFixed(10); }

function comment(text: string): string { return `-m comment --comment ${text.includes(' ') ? `"${text}"` : text}`; }

/** renderServicePort renders one service port's rules (upstream syncProxyRules' per-service body). */
export function renderServicePort(sp: ServicePortInfo, all: readonly EndpointInfo[], ctx: RuleContext): ServicePortRules {
  const key = `${sp.name}/${sp.protocol}`;
  const eps = usableEndpoints(all);
  const p = sp.protocol.toLowerCase();
  const proto = `-m ${p} -p ${p}`;
  const dst = `-d ${sp.clusterIP}/32 --dport ${sp.port}`;
  if (eps.length === 0) {
    // Refused at once rather than black-holed: the client sees ECONNREFUSED (upstream "has no endpoints").
    const c = comment(`${sp.name} has no endpoints`);
    let filter = `-A KUBE-SERVICES ${c} ${proto} ${dst} -j REJECT\n`;
    if (sp.nodePort) filter += `-A KUBE-EXTERNAL-SERVICES ${c} -m addrtype --dst-type LOCAL ${proto} --dport ${sp.nodePort} -j REJECT\n`;
    return { key, service: `${sp.namespace}/${sp.serviceName}`, name: sp.name, protocol: sp.protocol, filter, natServices: '', natNodePorts: '', chains: [], ruleCounts: { filter: sp.nodePort ? 2 : 1, nat: 0 } };
  }
  const svc = serviceChain(sp.name, sp.protocol);
  const chains: { name: string; rules: string }[] = [];
  const clusterIpComment = comment(`${sp.name} cluster IP`);
  const natServices = `-A KUBE-SERVICES ${clusterIpComment} ${proto} ${dst} -j ${svc}\n`;
  let nat = 1;
  // Traffic to the cluster IP from outside the pod network (the node itself, the host) is
  // masqueraded so replies come back through this node's conntrack.
  let svcRules = `-A ${svc} ${clusterIpComment} ${proto} ${dst} ! -s ${ctx.clusterCidr} -j KUBE-MARK-MASQ\n`;
  nat++;
  chains.push({ name: svc, rules: '' });
  let natNodePorts = '';
  if (sp.nodePort) {
    const ext = externalChain(sp.name, sp.protocol);
    natNodePorts = `-A KUBE-NODEPORTS ${comment(sp.name)} ${proto} --dport ${sp.nodePort} -j ${ext}\n`;
    chains.push({ name: ext, rules: `-A ${ext} ${comment(`masquerade traffic for ${sp.name} external destinations`)} -j KUBE-MARK-MASQ\n-A ${ext} -j ${svc}\n` });
    nat += 3;
  }
  const seps = eps.map((e) => ({ e, chain: endpointChain(sp.name, sp.protocol, `${e.ip}:${e.port}`) }));
  // upstream appendServiceCommentLocked: ' -m comment …' unless in large-cluster mode.
  const epComment = (text: string) => (ctx.largeClusterMode ? '' : ` ${comment(text)}`);
  if (sp.affinityTimeoutSeconds !== undefined) {
    for (const { e, chain } of seps) {
      svcRules += `-A ${svc}${epComment(`${sp.name} -> ${e.ip}:${e.port}`)} -m recent --name ${chain} --rcheck --seconds ${sp.affinityTimeoutSeconds} --reap -j ${chain}\n`;
    }
    nat += seps.length;
  }
  seps.forEach(({ e, chain }, i) => {
    const n = seps.length - i;
    const stat = n > 1 ? ` -m statistic --mode random --probability ${probability(n)}` : '';
    svcRules += `-A ${svc}${epComment(`${sp.name} -> ${e.ip}:${e.port}`)}${stat} -j ${chain}\n`;
  });
  nat += seps.length;
  chains[0]!.rules = svcRules;
  const spComment = epComment(sp.name);
  const affinity = sp.affinityTimeoutSeconds !== undefined ? ' -m recent --name %C --set' : '';
  for (const { e, chain } of seps) {
    // Hairpin: a pod reaching itself through the Service must see the reply come from the gateway.
    // An endpoint off the pod network (the apiserver on the host for default/kubernetes) cannot
    // route replies to pod IPs (the host blackholes them): always masquerade to the node's IP,
    // a deviation from upstream, whose hosts route pod CIDRs back.
    const masq = cidrContains(ctx.podNet, e.ip) ? `-A ${chain}${spComment} -s ${e.ip}/32 -j KUBE-MARK-MASQ\n` : `-A ${chain}${spComment} -j KUBE-MARK-MASQ\n`;
    chains.push({ name: chain, rules: `${masq}-A ${chain}${spComment} ${proto}${affinity.replace('%C', chain)} -j DNAT --to-destination ${e.ip}:${e.port}\n` });
  }
  nat += 2 * seps.length;
  return { key, service: `${sp.namespace}/${sp.serviceName}`, name: sp.name, protocol: sp.protocol, filter: '', natServices, natNodePorts, chains, ruleCounts: { filter: 0, nat } };
}

/** The fixed chains' rules that do not depend on any service. */
const FORWARD_RULES = (markMask: string) => [
  '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
  `-A KUBE-FORWARD ${comment('kubernetes forwarding rules')} -m mark --mark ${markMask} -j ACCEPT`,
  `-A KUBE-FORWARD ${comment('kubernetes forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
].join('\n') + '\n';
const NODEPORTS_LAST = `-A KUBE-SERVICES ${comment('kubernetes service nodeports; NOTE: this must be the last rule in this chain')} -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n`;
const STATIC_NAT = (mark: string) => [
  `-A KUBE-POSTROUTING -m mark ! --mark ${mark}/${mark} -j RETURN`,
  `-A KUBE-POSTROUTING -j MARK --xor-mark ${mark}`,
  `-A KUBE-POSTROUTING ${comment('kubernetes service traffic requiring SNAT')} -j MASQUERADE --random-fully`,
  `-A KUBE-MARK-MASQ -j MARK --or-mark ${mark}`,
].join('\n') + '\n';
const FILTER_HEAD = `*filter\n${FILTER_CHAINS.map((c) => `:${c} - [0:0]\n`).join('')}`;

/** fixedRules: the text of the fixed chains for service ports in program order. */
export function fixedRules(ports: Iterable<ServicePortRules>, ctx: RuleContext): FixedRules {
  const filter: string[] = [FILTER_HEAD];
  const svcs: string[] = [];
  const nps: string[] = [];
  for (const r of ports) {
    if (r.filter) filter.push(r.filter);
    if (r.natServices) svcs.push(r.natServices);
    if (r.natNodePorts) nps.push(r.natNodePorts);
  }
  filter.push(FORWARD_RULES(`${ctx.mark}/${ctx.mark}`), 'COMMIT\n');
  svcs.push(NODEPORTS_LAST);
  return { filter: filter.join(''), natServices: svcs.join(''), natNodePorts: nps.join('') };
}

/**
 * A full restore input is written in this order, so that it can be streamed into one
 * iptables-restore while it is still being rendered (Proxier): nat first — {@link NAT_PREAMBLE},
 * then each service port's {@link portBlock} (its chains declared before any rule jumps to them),
 * then {@link natPostamble} — and last {@link restoreTail}: what needs the kernel's current state
 * (stale chains, missing jumps), the nat COMMIT and the filter section.
 */
export const NAT_PREAMBLE = `*nat\n${NAT_CHAINS.map((c) => `:${c} - [0:0]\n`).join('')}`;

/** One service port's part of a full nat section. */
export function portBlock(r: ServicePortRules): string {
  let decl = '';
  let rules = '';
  for (const c of r.chains) { decl += `:${c.name} - [0:0]\n`; rules += c.rules; }
  return decl + r.natServices + r.natNodePorts + rules;
}

/** The fixed nat rules after all service ports (the KUBE-NODEPORTS jump must be KUBE-SERVICES' last rule). */
export function natPostamble(ctx: RuleContext): string { return NODEPORTS_LAST + STATIC_NAT(ctx.mark); }

/** Stale per-service chains flushed and deleted, missing jumps inserted, nat COMMIT, the filter section. */
export function restoreTail(fixed: FixedRules, natChains: ReadonlySet<string>, existingNatChains: Iterable<string>, jumps: readonly JumpRule[]): string {
  const stale = [...new Set(existingNatChains)].filter((c) => DYNAMIC_PREFIXES.some((p) => c.startsWith(p)) && !natChains.has(c)).sort();
  const jumpLines = (table: string) => jumps.filter((j) => j.table === table).map((j) => `-I ${j.chain} 1 ${jumpArgs(j)}\n`).join('');
  return [
    // Declaring a stale chain flushes it (dropping its jumps to other stale chains); then it can go.
    ...stale.map((c) => `:${c} - [0:0]\n`), ...stale.map((c) => `-X ${c}\n`), jumpLines('nat'), 'COMMIT\n',
    fixed.filter.slice(0, -'COMMIT\n'.length), jumpLines('filter'), 'COMMIT\n',
  ].join('');
}

/** Every nat chain a program of these ports keeps, and its rule counts. */
export function programStats(ports: Iterable<ServicePortRules>): { natChains: Set<string>; ruleCounts: { filter: number; nat: number } } {
  const natChains = new Set<string>(NAT_CHAINS);
  const ruleCounts = { filter: 3, nat: 5 };
  for (const r of ports) {
    ruleCounts.filter += r.ruleCounts.filter;
    ruleCounts.nat += r.ruleCounts.nat;
    for (const c of r.chains) natChains.add(c.name);
  }
  return { natChains, ruleCounts };
}

/** Program order of service ports: by Service ("ns/name"), then port name, then protocol. */
export function comparePorts(a: ServicePortRules, b: ServicePortRules): number {
  if (a.service !== b.service) return a.service < b.service ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : a.protocol.localeCompare(b.protocol);
}

/** assembleRules: the whole restore input for these service ports (in program order). */
export function assembleRules(ports: readonly ServicePortRules[], ctx: RuleContext, existingNatChains: Iterable<string> = [], jumps: readonly JumpRule[] = []): RenderedRules {
  const fixed = fixedRules(ports, ctx);
  const { natChains, ruleCounts } = programStats(ports);
  const text = NAT_PREAMBLE + ports.map(portBlock).join('') + natPostamble(ctx) + restoreTail(fixed, natChains, existingNatChains, jumps);
  return { text, natChains, ruleCounts, ports: new Map(ports.map((r) => [r.key, r])), fixed };
}

export function renderRules(input: RulesInput): RenderedRules {
  let total = 0;
  for (const sp of input.services) total += input.endpoints.get(`${sp.name}/${sp.protocol}`)?.length ?? 0;
  const ctx = ruleContext(input.clusterCidr, input.masqueradeBit, input.largeClusterMode ?? isLargeCluster(total));
  const ports = input.services.map((sp) => renderServicePort(sp, input.endpoints.get(`${sp.name}/${sp.protocol}`) ?? [], ctx)).sort(comparePorts);
  return assembleRules(ports, ctx, input.existingNatChains);
}

/** The state a partial restore is computed between (what the kernel holds, what is wanted). */
export interface RulesState { ports: ReadonlyMap<string, ServicePortRules>; fixed: FixedRules }

/**
 * incrementalRestoreInput: what to restore when prev is what the kernel holds (upstream's partial
 * sync): only chains whose text changed are declared (so --noflush rewrites them and leaves every
 * other chain alone), chains gone are deleted, the filter section and nat KUBE-SERVICES /
 * KUBE-NODEPORTS only when their text changed. A one-endpoint change thus writes its KUBE-SVC chain
 * and the SEP chains that came or went, not 10,000 rules. keys limits the comparison to the service
 * ports that may differ (the proxier knows which); by default all of both. '' when nothing differs.
 */
export function incrementalRestoreInput(prev: RulesState, next: RulesState, keys?: Iterable<string>): string {
  const decl: string[] = [];
  const rules: string[] = [];
  const gone: string[] = [];
  for (const k of keys ?? new Set([...prev.ports.keys(), ...next.ports.keys()])) {
    const a = prev.ports.get(k);
    const b = next.ports.get(k);
    if (a === b) continue;
    const before = new Map((a?.chains ?? []).map((c) => [c.name, c.rules]));
    for (const c of b?.chains ?? []) {
      if (before.get(c.name) !== c.rules) { decl.push(`:${c.name} - [0:0]\n`); rules.push(c.rules); }
      before.delete(c.name);
    }
    gone.push(...before.keys());
  }
  gone.sort();
  const out: string[] = [];
  if (prev.fixed.filter !== next.fixed.filter) out.push(next.fixed.filter);
  if (prev.fixed.natServices !== next.fixed.natServices) { decl.unshift(':KUBE-SERVICES - [0:0]\n'); rules.unshift(next.fixed.natServices); }
  if (prev.fixed.natNodePorts !== next.fixed.natNodePorts) { decl.unshift(':KUBE-NODEPORTS - [0:0]\n'); rules.unshift(next.fixed.natNodePorts); }
  if (decl.length > 0 || gone.length > 0) {
    // A gone chain is flushed before -X: a gone KUBE-SVC may still jump to a gone KUBE-SEP.
    out.push('*nat\n', ...decl, ...gone.map((c) => `:${c} - [0:0]\n`), ...rules, ...gone.map((c) => `-X ${c}\n`), 'COMMIT\n');
  }
  return out.join('');
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
