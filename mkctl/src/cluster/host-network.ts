/**
 * Host side of the local cluster's network: the bridge mk8s0, one network namespace per node
 * wired to it with a veth, blackhole routes for the cluster ranges, and the one FORWARD rule
 * that lets node-to-node traffic across mk8s0 through Docker's DROP policy. No uplink and no
 * masquerade: nothing the cluster sends can leave this machine.
 */
import { HOST_BRIDGE, HOST_BRIDGE_IP, POD_NETWORK, SERVICE_NETWORK, type NodePlan } from './network-plan.js';
import { run } from './processes.js';

const FORWARD_RULE = ['-i', HOST_BRIDGE, '-o', HOST_BRIDGE, '-j', 'ACCEPT', '-m', 'comment', '--comment', 'mk8s: node network'];

function linkExists(name: string, netns?: string): boolean {
  const args = netns ? ['-n', netns, 'link', 'show', name] : ['link', 'show', name];
  return run('ip', args, { allowFail: true }).ok;
}

function netnsExists(name: string): boolean {
  return run('ip', ['netns', 'list'], { allowFail: true }).stdout.split('\n').some((l) => l.split(' ')[0] === name);
}

/**
 * Creates the bridge, blackhole routes and forward rule (idempotent). extraIPs: more host addresses
 * on the bridge (one per apiserver when several run); they go with the bridge on removal.
 */
export function ensureHostNetwork(extraIPs: readonly string[] = []): void {
  if (!linkExists(HOST_BRIDGE)) run('ip', ['link', 'add', HOST_BRIDGE, 'type', 'bridge']);
  run('ip', ['addr', 'replace', `${HOST_BRIDGE_IP}/24`, 'dev', HOST_BRIDGE]);
  for (const ip of extraIPs) run('ip', ['addr', 'replace', `${ip}/24`, 'dev', HOST_BRIDGE]);
  run('ip', ['link', 'set', HOST_BRIDGE, 'up']);
  // Blackholes: a packet for a pod or Service address that is not routed into a node namespace
  // dies here instead of following the host's default route off the machine.
  for (const cidr of [POD_NETWORK, SERVICE_NETWORK]) run('ip', ['route', 'replace', 'blackhole', cidr]);
  for (const chain of ['DOCKER-USER', 'FORWARD']) {
    if (!run('iptables', ['-S', chain], { allowFail: true }).ok) continue;
    if (!run('iptables', ['-C', chain, ...FORWARD_RULE], { allowFail: true }).ok) run('iptables', ['-I', chain, ...FORWARD_RULE]);
    break;
  }
}

/** Creates node n's namespace and veth onto mk8s0 (idempotent). */
export function ensureNodeNetwork(n: NodePlan): void {
  if (!netnsExists(n.netns)) run('ip', ['netns', 'add', n.netns]);
  if (!linkExists('eth0', n.netns)) {
    if (linkExists(n.hostVeth)) run('ip', ['link', 'del', n.hostVeth]);
    run('ip', ['link', 'add', n.hostVeth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', n.netns]);
  }
  run('ip', ['link', 'set', n.hostVeth, 'master', HOST_BRIDGE]);
  run('ip', ['link', 'set', n.hostVeth, 'up']);
  run('ip', ['-n', n.netns, 'addr', 'replace', `${n.ip}/24`, 'dev', 'eth0']);
  run('ip', ['-n', n.netns, 'link', 'set', 'eth0', 'up']);
  run('ip', ['-n', n.netns, 'link', 'set', 'lo', 'up']);
  // Forwarding is per namespace: the node routes between its pods' bridge and eth0.
  run('ip', ['netns', 'exec', n.netns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
  // Service IPs route to the host (whose blackhole drops whatever kube-proxy did not DNAT), as a
  // real node's default route would: without a route the kernel answers "network unreachable"
  // before kube-proxy's REJECT for a Service without endpoints can run.
  run('ip', ['-n', n.netns, 'route', 'replace', SERVICE_NETWORK, 'via', HOST_BRIDGE_IP]);
}

/** Removes node n's namespace and veth. */
export function removeNodeNetwork(n: NodePlan): void {
  if (netnsExists(n.netns)) run('ip', ['netns', 'del', n.netns], { allowFail: true });
  if (linkExists(n.hostVeth)) run('ip', ['link', 'del', n.hostVeth], { allowFail: true });
}

/** Lists node namespaces this project made (mk8s-*), for cleanup of any node count. */
export function listNodeNamespaces(): string[] {
  return run('ip', ['netns', 'list'], { allowFail: true }).stdout.split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n.startsWith('mk8s-'));
}

/** Removes the bridge, routes and rule. */
export function removeHostNetwork(): void {
  for (const chain of ['DOCKER-USER', 'FORWARD']) {
    while (run('iptables', ['-C', chain, ...FORWARD_RULE], { allowFail: true }).ok) run('iptables', ['-D', chain, ...FORWARD_RULE], { allowFail: true });
  }
  for (const cidr of [POD_NETWORK, SERVICE_NETWORK]) run('ip', ['route', 'del', 'blackhole', cidr], { allowFail: true });
  // veths named mk8s-n<i> left by a node count that changed
  for (const line of run('ip', ['-o', 'link', 'show'], { allowFail: true }).stdout.split('\n')) {
    const m = /^\d+: (mk8s-n\d+)@/.exec(line);
    if (m?.[1]) run('ip', ['link', 'del', m[1]], { allowFail: true });
  }
  if (linkExists(HOST_BRIDGE)) run('ip', ['link', 'del', HOST_BRIDGE], { allowFail: true });
}
