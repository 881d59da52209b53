/**
 * The storage add-on `cluster up` installs: the default StorageClass `standard` (local-path,
 * WaitForFirstConsumer, Delete, expansion allowed) and the provisioner's ConfigMap
 * kube-system/local-path-config with each node's data directory (controller-manager
 * controllers/localpath/README.md). Idempotent: the class is left as it is when it exists; the
 * ConfigMap is rewritten so new nodes get their entry.
 */
import { ConfigMaps, isAlreadyExists, StorageClasses, type KubeObject } from '@mk8s/api';
import { createClientset } from '@mk8s/client';

export const STANDARD_STORAGE_CLASS: KubeObject = {
  apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass',
  metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  provisioner: 'mk8s.io/local-path', reclaimPolicy: 'Delete', volumeBindingMode: 'WaitForFirstConsumer', allowVolumeExpansion: true,
};

export function localPathConfig(nodeDirs: Readonly<Record<string, string>>): KubeObject {
  const nodePathMap = Object.entries(nodeDirs).map(([node, dir]) => ({ node, paths: [dir] }));
  return {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'local-path-config', namespace: 'kube-system' },
    data: { 'config.json': JSON.stringify({ nodePathMap }, null, 2) },
  };
}

export async function ensureStorageAddon(o: { kubeconfig: string; nodeDirs: Readonly<Record<string, string>> }): Promise<void> {
  const client = createClientset({ kubeconfig: o.kubeconfig, userAgent: 'mkctl-cluster-up' });
  try { await client.resource(StorageClasses).create(STANDARD_STORAGE_CLASS); } catch (err) { if (!isAlreadyExists(err)) throw err; }
  const cms = client.resource(ConfigMaps, 'kube-system');
  const cm = localPathConfig(o.nodeDirs);
  try {
    await cms.create(cm);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const cur = await cms.get('local-path-config');
    await cms.update({ ...cur, data: cm['data'] as Record<string, string> });
  }
}
