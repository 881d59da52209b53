import { dump } from 'js-yaml';

/** A kubeconfig for one server and user, as kubectl and our client read it. */
export function renderKubeconfig(o: { server: string; user?: string; namespace?: string }): string {
  const user = o.user ?? 'admin';
  return dump({
    apiVersion: 'v1', kind: 'Config', preferences: {},
    clusters: [{ name: 'mk8s', cluster: { server: o.server } }],
    users: [{ name: user, user: {} }],
    contexts: [{ name: 'mk8s', context: { cluster: 'mk8s', user, namespace: o.namespace ?? 'default' } }],
    'current-context': 'mk8s',
  });
}
