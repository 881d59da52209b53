/**
 * The local cluster's addresses (DESIGN.md network plan). Everything lives in network namespaces
 * this project creates; the host side is only the bridge mk8s0.
 */
export const HOST_BRIDGE = 'mk8s0';
export const NODE_NETWORK = '10.240.0.0/24';
export const HOST_BRIDGE_IP = '10.240.0.1';
export const POD_NETWORK = '10.244.0.0/16';
export const SERVICE_NETWORK = '10.96.0.0/12';
export const APISERVER_PORT = 6443;
/** The CRI shim's /healthz and /metrics port on each node (the kubelet's health port is 10248, kube-proxy's 10256). */
export const CRI_DOCKER_HEALTH_PORT = 10251;

export interface NodePlan { name: string; netns: string; ip: string; hostVeth: string }

/** Node i (1-based) is node-i at 10.240.0.(10+i), in netns mk8s-node-i. */
export function nodePlan(i: number): NodePlan {
  const name = `node-${i}`;
  return { name, netns: `mk8s-${name}`, ip: `10.240.0.${10 + i}`, hostVeth: `mk8s-n${i}` };
}

export interface EtcdMember { name: string; clientPort: number; peerPort: number }
export const ETCD_MEMBERS: readonly EtcdMember[] = [
  { name: 'etcd-1', clientPort: 2379, peerPort: 2380 },
  { name: 'etcd-2', clientPort: 22379, peerPort: 22380 },
  { name: 'etcd-3', clientPort: 32379, peerPort: 32380 },
];

/** etcd's --initial-cluster: every member by its peer URL. */
export function etcdInitialCluster(): string {
  return ETCD_MEMBERS.map((x) => `${x.name}=https://127.0.0.1:${x.peerPort}`).join(',');
}

export function etcdEndpoints(): string[] {
  return ETCD_MEMBERS.map((m) => `https://127.0.0.1:${m.clientPort}`);
}

/** etcd's TLS files (ensurePki's etcd CA, server and peer certs). */
export interface EtcdTls { ca: string; cert: string; key: string; peerCert: string; peerKey: string }

/**
 * The etcd command line of one member of the static 3-member cluster: clients and peers over TLS,
 * both required to present a certificate of the etcd CA (kubeadm's etcd flags).
 */
export function etcdArgs(m: EtcdMember, dataDir: string, state: 'new' | 'existing', tls: EtcdTls): string[] {
  const initial = etcdInitialCluster();
  return [
    '--name', m.name, '--data-dir', dataDir,
    '--listen-client-urls', `https://127.0.0.1:${m.clientPort}`, '--advertise-client-urls', `https://127.0.0.1:${m.clientPort}`,
    '--listen-peer-urls', `https://127.0.0.1:${m.peerPort}`, '--initial-advertise-peer-urls', `https://127.0.0.1:${m.peerPort}`,
    '--initial-cluster', initial, '--initial-cluster-state', state, '--initial-cluster-token', 'mk8s-local',
    '--cert-file', tls.cert, '--key-file', tls.key, '--client-cert-auth', '--trusted-ca-file', tls.ca,
    '--peer-cert-file', tls.peerCert, '--peer-key-file', tls.peerKey, '--peer-client-cert-auth', '--peer-trusted-ca-file', tls.ca,
    // Small machine: keep snapshots and the backend modest.
    '--snapshot-count', '10000', '--quota-backend-bytes', String(2 * 1024 ** 3), '--logger', 'zap', '--log-outputs', 'stderr',
  ];
}
