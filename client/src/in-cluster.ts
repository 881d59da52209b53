/**
 * In-cluster configuration (client-go rest.InClusterConfig): a pod reaches the apiserver at
 * $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT with the ServiceAccount token and CA the
 * kubelet mounts from the kube-api-access volume.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { RestConfig } from './kubeconfig.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Throws (as client-go's ErrNotInCluster) when the environment is not a pod's. */
export function inClusterRestConfig(o: { env?: NodeJS.ProcessEnv; readFile?: (p: string) => string; dir?: string } = {}): RestConfig {
  const env = o.env ?? process.env;
  const read = o.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const dir = o.dir ?? SERVICE_ACCOUNT_DIR;
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) throw new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
  const h = isIP(host) === 6 ? `[${host}]` : host;
  let namespace = 'default';
  try { namespace = read(`${dir}/namespace`).trim() || 'default'; } catch { /* optional, as upstream */ }
  return { server: `https://${h}:${port}`, namespace, token: read(`${dir}/token`).trim(), ca: read(`${dir}/ca.crt`) };
}
