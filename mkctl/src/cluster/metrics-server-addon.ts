/**
 * The metrics-server add-on of the local cluster (metrics-server/README.md says why it runs on the
 * host): its serving certificate (signed by the cluster CA, for metrics-server.kube-system.svc and
 * the host's node-network address), its API objects (metrics-server/manifests, the APIService's
 * caBundle set to the cluster CA), a token of its ServiceAccount in its kubeconfig (TokenRequest,
 * renewed at every `cluster up`), and the flags the supervisor starts it with. Idempotent.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_VERBS, isNotFound, ServiceAccounts, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type { Clientset } from '@mk8s/client';
import { createClientset } from '@mk8s/client';
import { issueCertificate, loadCa, type PkiPaths } from '@mk8s/component-base/pki';
import { applyObject, readManifests } from './addons.js';
import { renderKubeconfig } from './kubeconfig.js';
import { APISERVER_PORT, HOST_BRIDGE_IP } from './network-plan.js';
import type { StatePaths } from './paths.js';

export const METRICS_SERVER_MANIFEST = 'metrics-server/manifests/metrics-server.yaml';
export const METRICS_SERVER_PORT = 4443;
/** One year: the process reads its kubeconfig once; `cluster up` renews the token. */
const TOKEN_SECONDS = 365 * 24 * 3600;

export interface MetricsServerFiles { cert: string; key: string; kubeconfig: string }

export const metricsServerFiles = (p: StatePaths): MetricsServerFiles => ({
  cert: join(p.pki, 'metrics-server.crt'), key: join(p.pki, 'metrics-server.key'), kubeconfig: join(p.kubeconfigs, 'metrics-server.kubeconfig'),
});

/** apiregistration.k8s.io/v1 APIService (served by the apiserver's aggregator; not in @mk8s/api's scheme). */
const APIServices: ResourceDescriptor = {
  group: 'apiregistration.k8s.io', version: 'v1', kind: 'APIService', listKind: 'APIServiceList', resource: 'apiservices',
  singular: 'apiservice', namespaced: false, shortNames: [], categories: ['api-extensions'], verbs: ALL_VERBS, subresources: ['status'],
};

async function apply(client: Clientset, obj: KubeObject): Promise<void> {
  if (obj.kind !== 'APIService') { await applyObject(client, obj); return; }
  const rc = client.resource<KubeObject>(APIServices);
  let cur: KubeObject | undefined;
  try { cur = await rc.get(obj.metadata.name ?? ''); } catch (err) { if (!isNotFound(err)) throw err; }
  if (!cur) await rc.create(obj);
  else await rc.update({ ...obj, metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion } } as KubeObject);
}

/** The manifest's objects with the APIService's caBundle set to caPem. */
export function metricsServerObjects(root: string, caPem: string): KubeObject[] {
  return readManifests(join(root, METRICS_SERVER_MANIFEST)).map((o) => {
    if (o.kind !== 'APIService') return o;
    return { ...o, spec: { ...(o['spec'] as object), caBundle: Buffer.from(caPem).toString('base64') } };
  });
}

/** The supervisor's arguments for the metrics-server binary (after the script path). */
export function metricsServerArgs(pki: PkiPaths, f: MetricsServerFiles): string[] {
  return [
    '--kubeconfig', f.kubeconfig, '--bind-address', HOST_BRIDGE_IP, '--secure-port', String(METRICS_SERVER_PORT),
    '--tls-cert-file', f.cert, '--tls-private-key-file', f.key, '--metric-resolution', '15s',
    // The kubelets' serving certificates are signed by the cluster CA (upstream --kubelet-certificate-authority).
    '--kubelet-certificate-authority', pki.ca.cert, '--kubelet-preferred-address-types', 'InternalIP',
    // What kube-system/extension-apiserver-authentication publishes, given as files (upstream's flags).
    '--requestheader-client-ca-file', pki.frontProxy.ca.cert, '--requestheader-allowed-names', 'front-proxy-client',
    '--client-ca-file', pki.ca.cert,
  ];
}

/** Makes the certificate, applies the objects, and writes the kubeconfig with a fresh ServiceAccount token. */
export async function prepareMetricsServer(o: { root: string; paths: StatePaths; pki: PkiPaths; adminKubeconfig: string }): Promise<MetricsServerFiles> {
  const f = metricsServerFiles(o.paths);
  if (!existsSync(f.cert) || !existsSync(f.key)) {
    const ca = await loadCa(o.pki.ca);
    const out = await issueCertificate(ca, {
      commonName: 'metrics-server', usage: 'server',
      dnsNames: ['metrics-server.kube-system.svc', 'metrics-server.kube-system', 'metrics-server', 'localhost'], ips: [HOST_BRIDGE_IP, '127.0.0.1'],
    });
    writeFileSync(f.key, out.keyPem, { mode: 0o600 });
    writeFileSync(f.cert, out.certPem, { mode: 0o644 });
  }
  const client = createClientset({ kubeconfig: o.adminKubeconfig, userAgent: 'mkctl-addons' });
  try {
    for (const obj of metricsServerObjects(o.root, readFileSync(o.pki.ca.cert, 'utf8'))) await apply(client, obj);
    const tr = await client.resource(ServiceAccounts, 'kube-system').createSubresource('metrics-server', 'token', {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: TOKEN_SECONDS },
    }) as { status?: { token?: string } };
    const token = tr.status?.token;
    if (!token) throw new Error('TokenRequest for kube-system/metrics-server returned no token');
    const text = renderKubeconfig({ server: `https://127.0.0.1:${APISERVER_PORT}`, user: 'system:serviceaccount:kube-system:metrics-server', namespace: 'kube-system', tls: { ca: o.pki.ca.cert, token } });
    writeFileSync(`${f.kubeconfig}.tmp`, text, { mode: 0o600 });
    renameSync(`${f.kubeconfig}.tmp`, f.kubeconfig);
  } finally {
    await client.close();
  }
  return f;
}
