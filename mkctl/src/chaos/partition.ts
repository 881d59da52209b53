/**
 * `mkctl chaos partition` decisions (pure): the iptables commands that cut a node's network
 * namespace off from the control plane, and the commands that undo them.
 *
 * One chain of our own (MK8S-CHAOS-PARTITION) in the node netns' filter table holds a DROP per
 * control-plane address and direction; INPUT (the apiserver reaching the kubelet), OUTPUT (the
 * kubelet and kube-proxy reaching the apiserver) and FORWARD (the node's pods reaching it, e.g.
 * through the kubernetes Service) jump to it first. DROP applies to every packet, so established
 * connections (watches, the Lease heartbeat) stall as they do when a cable is cut. kube-proxy
 * only ever writes the filter table with --noflush, so it leaves the chain alone.
 */

export const PARTITION_CHAIN = 'MK8S-CHAOS-PARTITION';
export const PARTITION_COMMENT = 'mk8s chaos partition';
const HOOKS = ['INPUT', 'OUTPUT', 'FORWARD'] as const;

/** A command as argv (run without a shell). */
export type Argv = string[];

export interface PartitionPlan {
  /** Run in order; the first failure stops (and the undo plan then runs). */
  apply: Argv[];
  /** Run in order, each allowed to fail (what was never applied is simply not there). */
  undo: Argv[];
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * The plan for netns and the control plane's addresses (IPv4, each cut as a /32). Throws on an
 * address that is not IPv4 or a netns that is not one of this cluster's (`mk8s-<node>`): the
 * commands run as root.
 */
export function partitionPlan(o: { netns: string; addresses: readonly string[] }): PartitionPlan {
  if (!/^mk8s-[a-z0-9][a-z0-9-]*$/.test(o.netns)) throw new Error(`${o.netns} is not a node namespace of this cluster (mk8s-<node>)`);
  if (o.addresses.length === 0) throw new Error('no control-plane address to cut');
  for (const a of o.addresses) {
    const m = IPV4.exec(a);
    if (!m || m.slice(1).some((x) => Number(x) > 255)) throw new Error(`${a} is not an IPv4 address`);
  }
  const ipt = (...args: string[]): Argv => ['ip', 'netns', 'exec', o.netns, 'iptables', '-w', '5', ...args];
  const addrs = [...new Set(o.addresses)].sort();
  const jump = ['-m', 'comment', '--comment', PARTITION_COMMENT, '-j', PARTITION_CHAIN];
  const apply: Argv[] = [ipt('-N', PARTITION_CHAIN)];
  for (const a of addrs) {
    apply.push(ipt('-A', PARTITION_CHAIN, '-s', `${a}/32`, '-j', 'DROP'));
    apply.push(ipt('-A', PARTITION_CHAIN, '-d', `${a}/32`, '-j', 'DROP'));
  }
  for (const h of HOOKS) apply.push(ipt('-I', h, '1', ...jump));
  const undo: Argv[] = [...HOOKS.map((h) => ipt('-D', h, ...jump)), ipt('-F', PARTITION_CHAIN), ipt('-X', PARTITION_CHAIN)];
  return { apply, undo };
}

/** Renders argv for a log line (what an operator would type). */
export function renderArgv(a: Argv): string {
  return a.map((x) => (/^[\w./:=@%+-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`)).join(' ');
}
