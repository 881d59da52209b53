/**
 * The dashboard of the local cluster (issue 22): its serving certificate (signed by the cluster
 * CA, for 127.0.0.1/localhost), its supervised process, and the admin's login ServiceAccount
 * (kube-system/mk8s-dashboard-admin bound to cluster-admin). The dashboard itself holds no
 * credentials: `mkctl dashboard --url` mints a short-lived token of that ServiceAccount
 * (TokenRequest) and puts it in the URL fragment.
 */
import { existsSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { issueCertificate, loadCa, type CertPaths, type PkiPaths } from '@mk8s/component-base/pki';
import type { KubeObject } from '@mk8s/api';
import { createClientset } from '@mk8s/client';
import type { StatePaths } from './paths.js';
import type { ProcessSpec } from './processes.js';
import { applyObject } from './addons.js';

/** Where `cluster up` serves the dashboard (HTTPS, loopback only). */
export const DASHBOARD_HOST = '127.0.0.1';
export const DASHBOARD_PORT = 8443;
export const DASHBOARD_URL = `https://${DASHBOARD_HOST}:${DASHBOARD_PORT}`;
/** The admin's login identity (a token of it is what `mkctl dashboard --url` hands out). */
export const DASHBOARD_ADMIN_SA = { namespace: 'kube-system', name: 'mk8s-dashboard-admin' } as const;
/** Lifetime of a login token. */
export const DASHBOARD_TOKEN_SECONDS = 3600;

export const dashboardCertPaths = (pki: Pick<PkiPaths, 'dir'>): CertPaths => ({ cert: join(pki.dir, 'dashboard.crt'), key: join(pki.dir, 'dashboard.key') });

/** Issues the dashboard's serving certificate once (kept across restarts, like the rest of the PKI). */
export async function ensureDashboardCert(pki: PkiPaths): Promise<CertPaths> {
  const paths = dashboardCertPaths(pki);
  if (existsSync(paths.cert) && existsSync(paths.key)) return paths;
  const ca = await loadCa(pki.ca);
  const out = await issueCertificate(ca, { commonName: 'mk8s-dashboard', usage: 'server', dnsNames: ['localhost'], ips: [DASHBOARD_HOST] });
  writeFileSync(`${paths.key}.tmp`, out.keyPem, { mode: 0o600 }); renameSync(`${paths.key}.tmp`, paths.key);
  writeFileSync(`${paths.cert}.tmp`, out.certPem, { mode: 0o644 }); renameSync(`${paths.cert}.tmp`, paths.cert);
  return paths;
}

/** The dashboard's process: no kubeconfig, only the CA to verify the apiserver with. */
export function dashboardSpec(p: StatePaths, pki: PkiPaths, cert: CertPaths, apiserver: string): ProcessSpec | undefined {
  const main = join(p.root, 'dashboard', 'dist', 'main.js');
  // Both the server and the app bundle (make build); without them there is no dashboard to start.
  if (!existsSync(main) || !existsSync(join(p.root, 'dashboard', 'dist', 'app', 'index.html'))) return undefined;
  return {
    name: 'dashboard', command: process.execPath,
    args: [main, '--apiserver', apiserver, '--apiserver-ca-file', pki.ca.cert, '--tls-cert-file', cert.cert, '--tls-private-key-file', cert.key,
      '--bind-address', DASHBOARD_HOST, '--port', String(DASHBOARD_PORT)],
  };
}

/** The admin login ServiceAccount and its cluster-admin binding (idempotent). */
export function dashboardAdminObjects(): KubeObject[] {
  const { namespace, name } = DASHBOARD_ADMIN_SA;
  const labels = { 'app.kubernetes.io/name': 'mk8s-dashboard', 'app.kubernetes.io/managed-by': 'mkctl' };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace, labels } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    } as KubeObject,
  ];
}

export async function ensureDashboardAdmin(kubeconfig: string): Promise<void> {
  const client = createClientset({ kubeconfig, userAgent: 'mkctl-dashboard' });
  try { for (const o of dashboardAdminObjects()) await applyObject(client, o); } finally { await client.close(); }
}

/**
 * The login URL: the token rides in the fragment, which a browser never sends (no server log,
 * no proxy, no Referer); the app moves it to sessionStorage and clears the address bar.
 * With an object, the app opens its chain view (#/chain/<kind>/<namespace|_>/<name>).
 */
export function dashboardLoginUrl(base: string, token: string, object?: { kind: string; namespace?: string | undefined; name: string }): string {
  const f = new URLSearchParams({ token });
  if (object) f.set('next', `/chain/${encodeURIComponent(object.kind)}/${encodeURIComponent(object.namespace || '_')}/${encodeURIComponent(object.name)}`);
  return `${base.replace(/\/$/, '')}/#${f.toString()}`;
}
