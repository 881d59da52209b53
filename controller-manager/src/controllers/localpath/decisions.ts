/**
 * The local-path provisioner's pure parts: its configuration (local-path-provisioner's
 * config.json nodePathMap), the PV it makes for a claim on a node, and the helper pod that removes
 * a volume's directory on its node.
 */
import { ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE, type PersistentVolume, type PersistentVolumeClaim, type Pod, type StorageClass } from '@mk8s/api';

export const PROVISIONER_NAME = 'mk8s.io/local-path';
/** The ConfigMap in kube-system holding config.json, as rancher/local-path-provisioner's. */
export const CONFIG_MAP_NAME = 'local-path-config';
export const CONFIG_NAMESPACE = 'kube-system';
export const DEFAULT_NODE_KEY = 'DEFAULT_PATH_FOR_NON_LISTED_NODES';
/** Which node a provisioned volume lives on (local-path-provisioner's annotation name, our group). */
export const ANN_PROVISIONED_NODE = 'mk8s.io/local-path-node';
export const HELPER_IMAGE = 'busybox:1.36';
/** Helper pods at a time (rancher/local-path-provisioner's default of 4 worker threads). */
export const MAX_HELPER_PODS = 4;

export interface LocalPathConfig { nodePathMap: { node: string; paths: string[] }[] }

/** Parses config.json; throws Error with a message fit for an event when it is unusable. */
export function parseConfig(text: string | undefined): LocalPathConfig {
  if (!text) throw new Error(`no config.json in ConfigMap ${CONFIG_NAMESPACE}/${CONFIG_MAP_NAME}`);
  const c = JSON.parse(text) as Partial<LocalPathConfig>;
  if (!Array.isArray(c.nodePathMap)) throw new Error('config.json has no nodePathMap');
  return { nodePathMap: c.nodePathMap.filter((e) => typeof e?.node === 'string' && Array.isArray(e.paths)) };
}

/** The base directory for volumes on node: its own entry, else the default one (first path). */
export function basePathFor(cfg: LocalPathConfig, node: string): string | undefined {
  const e = cfg.nodePathMap.find((x) => x.node === node) ?? cfg.nodePathMap.find((x) => x.node === DEFAULT_NODE_KEY);
  return e?.paths[0];
}

/** pvc-<claim uid>, the external-provisioner naming. */
export const volumeNameFor = (claim: PersistentVolumeClaim): string => `pvc-${claim.metadata?.uid ?? ''}`;

/** The directory of a claim's volume: <base>/<pv>_<namespace>_<claim> (local-path-provisioner's layout). */
export const volumeDirFor = (base: string, pvName: string, claim: PersistentVolumeClaim): string =>
  `${base.replace(/\/+$/, '')}/${pvName}_${claim.metadata?.namespace ?? ''}_${claim.metadata?.name ?? ''}`;

/** Why this provisioner does not (yet) provision claim, or undefined when it should. */
export function provisionBlocker(claim: PersistentVolumeClaim, sc: StorageClass | undefined): string | undefined {
  if (!sc || sc.provisioner !== PROVISIONER_NAME) return 'not ours';
  if (claim.spec?.volumeName) return 'already has a volume';
  if (claim.metadata?.deletionTimestamp) return 'being deleted';
  if (!claim.metadata?.annotations?.[ANN_SELECTED_NODE]) return 'no node selected';
  return undefined;
}

/** The PV for claim on node (pre-bound to the claim so the binder finishes at once). */
export function buildVolume(o: { claim: PersistentVolumeClaim; sc: StorageClass; node: string; hostname: string; base: string }): PersistentVolume & { metadata: { name: string } } {
  const name = volumeNameFor(o.claim);
  const c = o.claim;
  return {
    apiVersion: 'v1', kind: 'PersistentVolume',
    metadata: { name, annotations: { [ANN_DYNAMICALLY_PROVISIONED]: PROVISIONER_NAME, [ANN_PROVISIONED_NODE]: o.node } },
    spec: {
      capacity: { storage: c.spec?.resources?.requests?.['storage'] ?? '0' },
      accessModes: [...(c.spec?.accessModes ?? [])],
      persistentVolumeReclaimPolicy: o.sc.reclaimPolicy ?? 'Delete',
      storageClassName: o.sc.metadata?.name ?? '',
      volumeMode: c.spec?.volumeMode ?? 'Filesystem',
      // The kubelet makes the directory on first mount (DirectoryOrCreate): no node round trip
      // before the pod can start. Deletion does need one (helperPod).
      hostPath: { path: volumeDirFor(o.base, name, c), type: 'DirectoryOrCreate' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [o.hostname] }] }] } },
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: c.metadata?.namespace ?? '', name: c.metadata?.name ?? '', uid: c.metadata?.uid ?? '' },
      ...(o.sc.mountOptions ? { mountOptions: [...o.sc.mountOptions] } : {}),
    },
  };
}

/** What to do with one of our volumes. */
export type VolumeAction = 'none' | 'delete' | 'expand';

export function volumeAction(pv: PersistentVolume, claim: PersistentVolumeClaim | undefined): VolumeAction {
  if (pv.metadata?.annotations?.[ANN_DYNAMICALLY_PROVISIONED] !== PROVISIONER_NAME || pv.metadata?.deletionTimestamp) return 'none';
  if (pv.status?.phase === 'Released' && pv.spec?.persistentVolumeReclaimPolicy === 'Delete') return 'delete';
  const want = claim?.spec?.resources?.requests?.['storage'];
  if (pv.status?.phase === 'Bound' && claim && claim.metadata?.uid === pv.spec?.claimRef?.uid && want && want !== pv.spec?.capacity?.['storage']) return 'expand';
  return 'none';
}

export const helperPodName = (pvName: string): string => `helper-pod-delete-${pvName}`.slice(0, 63);

/** The pod that removes a volume's directory on its node: mounts the parent, rm -rf the child. */
export function helperPod(pv: PersistentVolume & { metadata: { name: string } }, node: string): Pod & { metadata: { name: string } } {
  const path = pv.spec?.hostPath?.path ?? pv.spec?.local?.path ?? '';
  const slash = path.lastIndexOf('/');
  const parent = slash > 0 ? path.slice(0, slash) : '/';
  const dir = path.slice(slash + 1);
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: helperPodName(pv.metadata.name), namespace: CONFIG_NAMESPACE, labels: { 'app.kubernetes.io/name': 'local-path-helper', 'mk8s.io/volume': pv.metadata.name.slice(0, 63) } },
    spec: {
      nodeName: node, restartPolicy: 'Never', automountServiceAccountToken: false, terminationGracePeriodSeconds: 0,
      tolerations: [{ operator: 'Exists' }],
      containers: [{ name: 'helper', image: HELPER_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['/bin/sh', '-c', 'rm -rf "/data/$VOL_DIR"'],
        env: [{ name: 'VOL_DIR', value: dir }], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', hostPath: { path: parent, type: 'DirectoryOrCreate' } }],
    },
  };
}
