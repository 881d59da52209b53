/**
 * The `kube-system/extension-apiserver-authentication` ConfigMap (upstream's
 * ClientCARegistrationHook): the client CA and the requestheader configuration this apiserver
 * authenticates with, published so extension apiservers behind the aggregator know which client
 * certificate (the front proxy's) may assert X-Remote-User/X-Remote-Group. List values are JSON
 * arrays, as upstream writes them. The data is computed purely; the write is an idempotent upsert.
 */
import { ConfigMaps, type KubeObject } from '@mk8s/api';
import type { Registry, RequestContext } from '../registry/index.js';
import { toApiError } from '../endpoints/status.js';

/** The requestheader authentication flags (--requestheader-*), files read already. */
export interface RequestHeaderConfig {
  /** PEM of --requestheader-client-ca-file. */
  clientCA: string;
  allowedNames: readonly string[];
  usernameHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeadersPrefixes: readonly string[];
}

export const EXTENSION_APISERVER_AUTHENTICATION = { namespace: 'kube-system', name: 'extension-apiserver-authentication' } as const;

const SYSTEM: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, warnings: [] };

/** The ConfigMap's data: client-ca-file when a client CA is set, the requestheader-* keys when requestheader is. */
export function extensionApiserverAuthenticationData(o: { clientCA?: string; requestHeader?: RequestHeaderConfig }): Record<string, string> {
  const data: Record<string, string> = {};
  if (o.clientCA) data['client-ca-file'] = o.clientCA;
  const rh = o.requestHeader;
  if (rh) {
    data['requestheader-client-ca-file'] = rh.clientCA;
    data['requestheader-allowed-names'] = JSON.stringify(rh.allowedNames);
    data['requestheader-username-headers'] = JSON.stringify(rh.usernameHeaders);
    data['requestheader-group-headers'] = JSON.stringify(rh.groupHeaders);
    data['requestheader-extra-headers-prefix'] = JSON.stringify(rh.extraHeadersPrefixes);
  }
  return data;
}

/** Creates or updates the ConfigMap to carry exactly data. */
export async function reconcileExtensionApiserverAuthentication(registry: Registry, data: Record<string, string>): Promise<void> {
  const { namespace, name } = EXTENSION_APISERVER_AUTHENTICATION;
  const store = registry.get(ConfigMaps)!;
  try {
    await store.create(SYSTEM, namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { ...data } } as KubeObject);
    return;
  } catch (err) {
    if (toApiError(err).reason !== 'AlreadyExists') throw err;
  }
  // ConfigMaps are not created on update (as upstream), so an existing one is updated in place.
  await store.updateWith(SYSTEM, namespace, name, (cur) => {
    const next: Record<string, any> = cur ? structuredClone(cur) : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } }; // eslint-disable-line @typescript-eslint/no-explicit-any
    next['data'] = { ...data };
    delete next['metadata']['resourceVersion'];
    return next as KubeObject;
  }, 'main', false);
}
