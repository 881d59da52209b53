import { readFileSync } from 'node:fs';
import { dump } from 'js-yaml';

/** Credentials of one kubeconfig user, as file paths (their contents are embedded). */
export interface KubeconfigTls { ca: string; cert?: string; key?: string; token?: string }

const b64File = (p: string) => readFileSync(p).toString('base64');

/**
 * A kubeconfig for one server and user, as kubectl and our client read it. With tls the CA and
 * the client certificate are embedded (`*-data`), so the file stands alone wherever it is copied.
 */
export function renderKubeconfig(o: { server: string; user?: string; namespace?: string; tls?: KubeconfigTls }): string {
  const user = o.user ?? 'admin';
  const t = o.tls;
  return dump({
    apiVersion: 'v1', kind: 'Config', preferences: {},
    clusters: [{ name: 'mk8s', cluster: { server: o.server, ...(t ? { 'certificate-authority-data': b64File(t.ca) } : {}) } }],
    users: [{ name: user, user: {
      ...(t?.cert ? { 'client-certificate-data': b64File(t.cert) } : {}),
      ...(t?.key ? { 'client-key-data': b64File(t.key) } : {}),
      ...(t?.token ? { token: t.token } : {}),
    } }],
    contexts: [{ name: 'mk8s', context: { cluster: 'mk8s', user, namespace: o.namespace ?? 'default' } }],
    'current-context': 'mk8s',
  });
}
