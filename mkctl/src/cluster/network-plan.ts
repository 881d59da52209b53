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

/** The most apiservers `cluster up --apiservers N` runs: their addresses 10.240.0.2-10 sit below the nodes' (.11 up). */
export const MAX_APISERVERS = 9;
/** The TCP balancer in front of N > 1 apiservers (Debian's haproxy), a supervised process of this name. */
export const BALANCER_NAME = 'haproxy';

/**
 * One apiserver of the control plane. With one apiserver (kubeadm's default single control plane,
 * no balancer) it is `apiserver` on 127.0.0.1 and 10.240.0.1:6443, as before. With N > 1 each
 * `apiserver-<i>` has an address of its own on mk8s0, 10.240.0.(2+i), port 6443 (the `kubernetes`
 * Service's endpoints differ by IP, one port for all, as upstream's), and the balancer takes
 * 127.0.0.1:6443 and 10.240.0.1:6443, the addresses every kubeconfig names.
 */
export interface ApiserverPlan { name: string; ip: string; bindAddress: string; port: number; readyHost: string }

export function apiserverPlans(count: number): ApiserverPlan[] {
  if (!Number.isInteger(count) || count < 1 || count > MAX_APISERVERS) throw new Error(`--apiservers must be 1 to ${MAX_APISERVERS}, not ${count}`);
  if (count === 1) return [{ name: 'apiserver', ip: HOST_BRIDGE_IP, bindAddress: `127.0.0.1,${HOST_BRIDGE_IP}`, port: APISERVER_PORT, readyHost: '127.0.0.1' }];
  return Array.from({ length: count }, (_, i) => {
    const ip = `10.240.0.${2 + i}`;
    return { name: `apiserver-${i}`, ip, bindAddress: ip, port: APISERVER_PORT, readyHost: ip };
  });
}

/** Every address an apiserver of any count may serve on: the serving certificate carries them all. */
export function apiserverCertIPs(): string[] {
  return Array.from({ length: MAX_APISERVERS }, (_, i) => `10.240.0.${2 + i}`);
}

/** True for the supervised names of apiservers (`apiserver`, `apiserver-0`, ...). */
export const isApiserverName = (n: string) => /^apiserver(-\d+)?$/.test(n);

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
