/**
 * The docker-compose cluster's security, made from the same code as the local cluster's:
 * `mkctl cluster compose-pki` (the compose `pki` service, run once before every other service)
 * makes the PKI with ensurePki and the EncryptionConfiguration under the state dir's pki/ca, then
 * gives each service a directory of only what it needs (mounted read-only at COMPOSE_TLS_MOUNT):
 * etcd its serving/peer certificates, the apiserver its certificates and the flags of
 * secureApiserverFlags (x509 + ServiceAccount tokens, Node,RBAC, admission, encryption at rest,
 * audit log), the controller-manager, scheduler and addons a kubeconfig of their own identity, each
 * node its `mkctl cluster credentials` files (the kubelet serves HTTPS with webhook authn/authz).
 * `mkctl cluster compose-credentials` prints the admin's kubeconfig for the host.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ensurePki, pkiPaths, type PkiPaths } from '@mk8s/component-base/pki';
import { secureApiserverFlags } from './apiserver-flags.js';
import { ensureEncryptionConfig, nodeCredentialCopies } from './cluster.js';
import { renderKubeconfig } from './kubeconfig.js';

/** Addresses of docker-compose.yml (network `cluster`, 10.250.0.0/24). */
export const COMPOSE_APISERVER_IP = '10.250.0.10';
export const COMPOSE_APISERVER_PORT = 6443;
export const COMPOSE_ETCD: readonly { name: string; ip: string }[] = [
  { name: 'etcd-1', ip: '10.250.0.11' }, { name: 'etcd-2', ip: '10.250.0.12' }, { name: 'etcd-3', ip: '10.250.0.13' },
];
export const COMPOSE_NODES: readonly { name: string; ip: string }[] = [
  { name: 'compose-node-1', ip: '10.250.0.31' }, { name: 'compose-node-2', ip: '10.250.0.32' },
];
/** Where each service sees its directory of credentials. */
export const COMPOSE_TLS_MOUNT = '/etc/mk8s/tls';
/** Where the apiserver container writes its audit log (the state dir's logs/ on the host). */
export const COMPOSE_LOG_MOUNT = '/var/log/mk8s';
/** The host's default state dir ($MK8S_COMPOSE_STATE overrides, as in docker-compose.yml). */
export const composeStateDir = (): string => process.env['MK8S_COMPOSE_STATE'] ?? '/var/lib/mk8s-compose';

/** The PKI options of the compose cluster: its apiserver, etcd and node addresses in the certificates. */
export function composePkiOptions(): Parameters<typeof ensurePki>[1] {
  return {
    nodes: COMPOSE_NODES.map((n) => n.name),
    nodeIPs: Object.fromEntries(COMPOSE_NODES.map((n) => [n.name, [n.ip]])),
    apiserverIPs: [COMPOSE_APISERVER_IP], apiserverDNSNames: ['apiserver'],
    etcdIPs: COMPOSE_ETCD.map((m) => m.ip), etcdDNSNames: COMPOSE_ETCD.map((m) => m.name),
  };
}

const internalServer = `https://${COMPOSE_APISERVER_IP}:${COMPOSE_APISERVER_PORT}`;

/** One file a service directory gets: its path there, its content, its mode. */
export interface ServiceFile { path: string; content: string | Buffer; mode: number }

/**
 * Every service directory's files, by directory name (relative to the pki dir), from a complete
 * PKI under caDir. Pure but for reading the PKI files.
 */
export function composeServiceFiles(pki: PkiPaths, encryptionConfig: string): Record<string, ServiceFile[]> {
  const file = (from: string, to: string, mode = from.endsWith('.key') ? 0o600 : 0o644): ServiceFile => ({ path: to, content: readFileSync(from), mode });
  // The apiserver's directory keeps pkiPaths' layout, so secureApiserverFlags names its files there.
  const same = (from: string) => file(from, relative(pki.dir, from));
  const mounted = pkiPaths(COMPOSE_TLS_MOUNT, []);
  const flags = secureApiserverFlags(mounted, {
    etcdServers: COMPOSE_ETCD.map((m) => `https://${m.ip}:2379`), bindAddress: '0.0.0.0', port: COMPOSE_APISERVER_PORT,
    advertiseAddress: COMPOSE_APISERVER_IP, encryptionConfig: join(COMPOSE_TLS_MOUNT, 'encryption-config.yaml'),
    auditPolicy: '/mk8s/apiserver/audit-policy.default.yaml', auditLog: join(COMPOSE_LOG_MOUNT, 'audit.log'),
  });
  const kubeconfig = (user: string, c: { cert: string; key: string }): ServiceFile => ({
    path: 'kubeconfig', mode: 0o600, content: renderKubeconfig({ server: internalServer, user, tls: { ca: pki.ca.cert, ...c } }),
  });
  const out: Record<string, ServiceFile[]> = {
    etcd: [file(pki.etcd.ca.cert, 'ca.crt'), file(pki.etcd.server.cert, 'server.crt'), file(pki.etcd.server.key, 'server.key'),
      file(pki.etcd.peer.cert, 'peer.crt'), file(pki.etcd.peer.key, 'peer.key')],
    apiserver: [
      ...[pki.ca.cert, pki.apiserver.cert, pki.apiserver.key, pki.apiserverKubeletClient.cert, pki.apiserverKubeletClient.key,
        pki.serviceAccount.key, pki.serviceAccount.pub, pki.etcd.ca.cert, pki.apiserverEtcdClient.cert, pki.apiserverEtcdClient.key,
        pki.frontProxy.ca.cert, pki.frontProxy.client.cert, pki.frontProxy.client.key].map(same),
      file(encryptionConfig, 'encryption-config.yaml', 0o600),
      // One flag or value a line: the entrypoint passes them to apiserver/dist/main.js.
      { path: 'flags', content: flags.join('\n') + '\n', mode: 0o644 },
    ],
    // The CA key too: the controller-manager signs approved CertificateSigningRequests (csrsigning), as locally.
    'controller-manager': [kubeconfig('system:kube-controller-manager', pki.controllerManager), file(pki.ca.cert, 'ca.crt'), file(pki.ca.key, 'ca.key')],
    scheduler: [kubeconfig('system:kube-scheduler', pki.scheduler)],
    // The addons service applies the add-on manifests as the admin (what cluster up does).
    addons: [kubeconfig('kubernetes-admin', pki.admin)],
  };
  for (const n of COMPOSE_NODES) out[n.name] = nodeCredentialCopies(pki, n.name).map(([from, to]) => file(from, to));
  return out;
}

function writeAtomic(f: ServiceFile & { path: string }): void {
  mkdirSync(dirname(f.path), { recursive: true, mode: 0o700 });
  writeFileSync(`${f.path}.tmp`, f.content, { mode: f.mode });
  renameSync(`${f.path}.tmp`, f.path);
}

/**
 * Makes (once; kept across restarts) the compose cluster's PKI and encryption key under dir/ca,
 * and (re)writes every service's directory under dir.
 */
export async function composePki(o: { dir: string; out?: (l: string) => void }): Promise<void> {
  const out = o.out ?? ((l: string) => console.log(l));
  const caDir = join(o.dir, 'ca');
  const pki = await ensurePki(caDir, composePkiOptions());
  const enc = join(caDir, 'encryption-config.yaml');
  ensureEncryptionConfig(enc);
  for (const [svc, files] of Object.entries(composeServiceFiles(pki, enc))) {
    mkdirSync(join(o.dir, svc), { recursive: true, mode: 0o700 });
    for (const f of files) writeAtomic({ ...f, path: join(o.dir, svc, f.path) });
  }
  out(`compose PKI in ${caDir}; service credentials in ${o.dir}/<service>; the host's kubeconfig: mkctl cluster compose-credentials`);
}

/** The admin's kubeconfig for the host: the published loopback port, the cluster CA, the admin certificate. */
export function composeAdminKubeconfig(o: { stateDir: string; port: number }): string {
  const pki = pkiPaths(join(o.stateDir, 'pki', 'ca'), []);
  return renderKubeconfig({ server: `https://127.0.0.1:${o.port}`, user: 'kubernetes-admin', tls: { ca: pki.ca.cert, ...pki.admin } });
}
