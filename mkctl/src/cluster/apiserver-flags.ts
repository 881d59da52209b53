/**
 * The secure apiserver command line, shared by the local cluster (`cluster up`) and the compose
 * cluster (`cluster compose-pki` writes it for the apiserver container), so both run the same
 * authentication (x509 client certificates of the cluster CA, ServiceAccount tokens), Node,RBAC
 * authorization, admission plugins, encryption at rest and audit log. Pure.
 */
import type { PkiPaths } from '@mk8s/component-base/pki';

export interface ApiserverFlagOptions {
  etcdServers: readonly string[];
  /** Addresses to listen on (comma-separated list or one address). */
  bindAddress: string;
  port: number;
  /** The address the `kubernetes` Service's endpoints carry. @default none (the apiserver picks) */
  advertiseAddress?: string;
  encryptionConfig: string;
  auditPolicy: string;
  auditLog: string;
}

/** Flags for apiserver/dist/main.js (the script itself not included): every security stage on, files from pki. */
export function secureApiserverFlags(pki: PkiPaths, o: ApiserverFlagOptions): string[] {
  return [
    '--etcd-servers', o.etcdServers.join(','),
    '--etcd-cafile', pki.etcd.ca.cert, '--etcd-certfile', pki.apiserverEtcdClient.cert, '--etcd-keyfile', pki.apiserverEtcdClient.key,
    '--bind-address', o.bindAddress, '--port', String(o.port),
    ...(o.advertiseAddress ? ['--advertise-address', o.advertiseAddress] : []),
    '--tls-cert-file', pki.apiserver.cert, '--tls-private-key-file', pki.apiserver.key, '--client-ca-file', pki.ca.cert,
    '--authorization-mode', 'Node,RBAC',
    '--service-account-key-file', pki.serviceAccount.pub,
    '--encryption-provider-config', o.encryptionConfig,
    '--kubelet-client-certificate', pki.apiserverKubeletClient.cert, '--kubelet-client-key', pki.apiserverKubeletClient.key,
    '--kubelet-certificate-authority', pki.ca.cert,
    // API aggregation (kubeadm's defaults): the aggregator's front-proxy client identity, and the
    // requestheader configuration it publishes in kube-system/extension-apiserver-authentication.
    '--proxy-client-cert-file', pki.frontProxy.client.cert, '--proxy-client-key-file', pki.frontProxy.client.key,
    '--requestheader-client-ca-file', pki.frontProxy.ca.cert, '--requestheader-allowed-names', 'front-proxy-client',
    '--requestheader-username-headers', 'X-Remote-User', '--requestheader-group-headers', 'X-Remote-Group',
    '--requestheader-extra-headers-prefix', 'X-Remote-Extra-',
    // Audit log (audit.k8s.io/v1 JSON lines, rotated): the repository's default policy, Secrets at Metadata only.
    '--audit-policy-file', o.auditPolicy,
    '--audit-log-path', o.auditLog, '--audit-log-maxsize', '50', '--audit-log-maxbackup', '2',
    ...admissionFlags(pki),
  ];
}

/** Admission plugins and the ServiceAccount signing key (owned by the admission work): extra apiserver flags. */
function admissionFlags(pki: PkiPaths): string[] {
  return [
    '--enable-admission-plugins', 'NamespaceLifecycle,LimitRanger,ServiceAccount,NodeRestriction,PodSecurity,Priority,DefaultTolerationSeconds,ResourceQuota',
    '--service-account-signing-key-file', pki.serviceAccount.key,
  ];
}
