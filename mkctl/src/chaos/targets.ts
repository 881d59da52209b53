/**
 * `mkctl chaos` decisions (pure): which of the cluster's processes a target names, which signals a
 * fault sends, and what `--watch` prints as the cluster heals.
 */

export type ChaosAction = 'kill' | 'stop' | 'restart';
export const CHAOS_ACTIONS: readonly ChaosAction[] = ['kill', 'stop', 'restart'];

/** What the target resolution needs to know about the running cluster. */
export interface ClusterFacts {
  /** Supervised process names (etcd-1, apiserver, node-1-kubelet, ...). */
  processes: string[];
  etcdLeader?: string | undefined;
  etcdFollowers: string[];
  /** Leader-election Leases: the holder and whether it is still valid. */
  leases: { 'controller-manager'?: LeaseFact; scheduler?: LeaseFact };
  /**
   * Per component, the supervised instance whose /metrics says leader_election_master_status 1
   * (when several instances run, the Lease's holderIdentity, hostname_uuid, names no process).
   */
  leaders?: { 'controller-manager'?: string; scheduler?: string };
}
export interface LeaseFact { holder?: string; valid: boolean }

/**
 * Whether resolving target needs etcd's view (who leads). Only the etcd roles do: a member named
 * directly must not wait on `etcdctl endpoint status`, which hangs on a member already stopped (T5
 * stops two at once: the second SIGSTOP came ~16 s late, and the first member's SIGCONT fell inside
 * the outage window).
 */
export function needsEtcdFacts(target: string): boolean {
  return target === 'etcd-leader' || target === 'etcd-follower';
}

export const ROLES = ['etcd-leader', 'etcd-follower', 'apiserver', 'controller-manager-leader', 'scheduler-leader', 'kubelet/<node>', 'cri/<node>', 'proxy/<node>', 'node/<node>'] as const;

const NODE_ROLE: Record<string, string> = { kubelet: 'kubelet', cri: 'cri-docker', proxy: 'kube-proxy' };

/**
 * The processes target names: a process name as `cluster status` lists it, or a role. One
 * controller-manager and one scheduler run here, so the leader role names that process once its
 * Lease is held (the holder identity is hostname_uuid, not a process).
 */
export function resolveTarget(target: string, f: ClusterFacts): { names: string[] } | { error: string } {
  const have = (n: string) => f.processes.includes(n);
  if (have(target)) return { names: [target] };
  switch (target) {
    case 'etcd-leader': return f.etcdLeader && have(f.etcdLeader) ? { names: [f.etcdLeader] } : { error: 'etcd has no leader now' };
    case 'etcd-follower': {
      const x = f.etcdFollowers.filter(have).sort()[0];
      return x ? { names: [x] } : { error: 'no etcd follower is running' };
    }
    case 'apiserver': {
      // One of N (the first by name): killing every apiserver is a control-plane outage, not an HA test; name
      // apiserver-<i> for another one.
      const first = f.processes.filter((n) => /^apiserver(-\d+)?$/.test(n)).sort((a, b) => ordinal(a) - ordinal(b))[0];
      return first ? { names: [first] } : { error: 'no apiserver is supervised' };
    }
    case 'controller-manager-leader':
    case 'scheduler-leader': {
      const comp = target === 'scheduler-leader' ? 'scheduler' : 'controller-manager';
      const lease = f.leases[comp];
      if (!lease?.holder || !lease.valid) return { error: `no ${comp} holds its leader Lease now` };
      const instances = componentInstances(comp, f.processes);
      const leader = f.leaders?.[comp];
      if (leader && instances.includes(leader)) return { names: [leader] };
      if (instances.length === 1) return { names: instances };
      return instances.length ? { error: `none of ${instances.join(', ')} reports leading the ${comp} Lease (held by ${lease.holder})` } : { error: `${comp} is not supervised` };
    }
  }
  const m = /^(kubelet|cri|proxy|node)\/(.+)$/.exec(target);
  if (m) {
    const [, role, node] = m as unknown as [string, string, string];
    const names = role === 'node' ? nodeProcesses(node, f.processes) : [`${node}-${NODE_ROLE[role]}`].filter(have);
    return names.length ? { names } : { error: `no ${role === 'node' ? 'process' : NODE_ROLE[role]} of node ${node} is supervised` };
  }
  return { error: `unknown target ${target}: a process (${f.processes.join(', ')}) or a role (${ROLES.join(', ')})` };
}

const ordinal = (n: string) => Number(/-(\d+)$/.exec(n)?.[1] ?? -1);

/** The signals of a fault, in order, and the pause between them. */
export function faultSignals(action: ChaosAction, seconds: number): { signal: NodeJS.Signals; afterMs: number }[] {
  switch (action) {
    case 'kill': return [{ signal: 'SIGKILL', afterMs: 0 }];
    case 'stop': return [{ signal: 'SIGSTOP', afterMs: 0 }, { signal: 'SIGCONT', afterMs: seconds * 1000 }];
    case 'restart': return [{ signal: 'SIGTERM', afterMs: 0 }];
  }
}

/** The processes of a node (what node-down stops), sorted. */
export function nodeProcesses(node: string, processes: readonly string[]): string[] {
  return processes.filter((n) => Object.values(NODE_ROLE).some((r) => n === `${node}-${r}`)).sort();
}

/** Instances of a leader-elected component: `controller-manager`, `controller-manager-2`, ... */
export function componentInstances(comp: 'controller-manager' | 'scheduler', processes: readonly string[]): string[] {
  return processes.filter((n) => n === comp || (n.startsWith(`${comp}-`) && /^\d+$/.test(n.slice(comp.length + 1)))).sort();
}

/** leader_election_master_status{name=lease} from a /metrics text: true for 1, false for 0, undefined if absent. */
export function leaderFromMetrics(text: string, lease: string): boolean | undefined {
  for (const line of text.split('\n')) {
    const m = /^leader_election_master_status\{([^}]*)\}\s+(\S+)/.exec(line);
    if (m && new RegExp(`(^|,)name="${lease}"`).test(m[1]!)) return Number(m[2]) === 1;
  }
  return undefined;
}

/** A duration flag: seconds as a number (`60`) or Go-style (`60s`, `2m`, `1m30s`, `500ms`). */
export function parseSeconds(flag: string, value: string): number {
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/y;
  let total = 0, pos = 0;
  for (let m = re.exec(v); m; m = re.exec(v)) { total += Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2] as 'ms' | 's' | 'm' | 'h']; pos = re.lastIndex; }
  if (v === '' || pos !== v.length) throw new Error(`invalid ${flag} "${value}": a duration expected (60, 60s, 2m, 1m30s)`);
  return total;
}

/** One look at the cluster, as `--watch` takes it every second. */
export interface Observation {
  /** name → "running pid N" | "backoff" | "held" | "NOT RUNNING" */
  processes: Record<string, string>;
  apiserverReady: boolean;
  etcdLeader?: string | undefined;
  /** lease name → holder (undefined when expired or unreadable) */
  leases: Record<string, string | undefined>;
  /** node → Ready status (True/False/Unknown) */
  nodes: Record<string, string>;
  /** namespace/name → "available/desired" of Deployments */
  deployments: Record<string, string>;
  /** node → its taints (key:effect, sorted, comma-separated; 'none') */
  taints?: Record<string, string>;
  /** namespace/name → "<node or -> <phase or Terminating>" of the pods outside kube-system */
  pods?: Record<string, string>;
}

/** What changed between two observations, one line each (pure). */
export function describeChanges(prev: Observation | undefined, next: Observation): string[] {
  const out: string[] = [];
  const map = (what: string, a: Record<string, string | undefined> | undefined, b: Record<string, string | undefined>) => {
    for (const k of [...new Set([...Object.keys(a ?? {}), ...Object.keys(b)])].sort()) {
      const x = a?.[k]; const y = b[k];
      if (x !== y) out.push(`${what} ${k}: ${x ?? '-'} -> ${y ?? '-'}`);
    }
  };
  map('process', prev?.processes, next.processes);
  if (prev?.apiserverReady !== next.apiserverReady) out.push(`apiserver /readyz: ${next.apiserverReady ? 'ok' : 'FAILING'}`);
  if (prev?.etcdLeader !== next.etcdLeader) out.push(`etcd leader: ${prev?.etcdLeader ?? '-'} -> ${next.etcdLeader ?? 'none'}`);
  map('lease', prev?.leases, next.leases);
  map('node Ready', prev?.nodes, next.nodes);
  if (next.taints) map('node taints', prev?.taints, next.taints);
  map('deployment', prev?.deployments, next.deployments);
  if (next.pods) map('pod', prev?.pods, next.pods);
  return out;
}

/**
 * A node left down has been dealt with once the control plane has noticed (Ready not True) and
 * every pod outside kube-system that ran there is gone or Terminating (evicted; its replacement
 * is then judged by Deployment availability). kube-system's own pods keep the default 300 s
 * toleration and are not waited for.
 */
export function nodeLossHandled(o: Observation, nodes: readonly string[]): boolean {
  return nodes.every((n) => o.nodes[n] !== undefined && o.nodes[n] !== 'True'
    && Object.values(o.pods ?? {}).every((v) => !v.startsWith(`${n} `) || v.endsWith(' Terminating')));
}

const available = (d: string | undefined) => { const [a, w] = (d ?? '').split('/'); return !!a && a === w; };

/**
 * Converged: every process running, the apiserver ready, etcd and both leases with a leader, and
 * every node and Deployment that was Ready / fully available before the fault (baseline) so
 * again; without a baseline, all of them. A Deployment broken before the fault is not waited for.
 */
export function isConverged(o: Observation, baseline?: Observation): boolean {
  const nodes = Object.keys(baseline?.nodes ?? o.nodes).filter((n) => !baseline || baseline.nodes[n] === 'True');
  const deps = Object.keys(baseline?.deployments ?? o.deployments).filter((d) => !baseline || available(baseline.deployments[d]));
  return Object.values(o.processes).every((s) => s.startsWith('running'))
    && o.apiserverReady && !!o.etcdLeader
    && Object.values(o.leases).every((h) => !!h)
    && nodes.every((n) => o.nodes[n] === 'True')
    && deps.every((d) => available(o.deployments[d]) || !(d in o.deployments));
}
