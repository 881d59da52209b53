/**
 * ServiceAccount admission (upstream plugin/pkg/admission/serviceaccount): every new pod runs as a
 * ServiceAccount (`default` unless named), which must exist, and gets the API access volume
 * `kube-api-access-<5>` (a bound token, the cluster CA from ConfigMap kube-root-ca.crt, the
 * namespace) mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount in every container
 * and init container, unless automountServiceAccountToken is false on the pod (first) or the SA.
 * Mirror pods are left alone. The SA's imagePullSecrets are copied to a pod that lists none.
 */
import { errors, type KubeObject } from '@mk8s/api';
import { generateName } from '../../registry/generic/names.js';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';
import { forbidden } from './namespace-lifecycle.js';
import { objectName } from './pod-security.js';

export const NAME = 'ServiceAccount';
export const DEFAULT_SERVICE_ACCOUNT_NAME = 'default';
export const SERVICE_ACCOUNT_VOLUME_NAME = 'kube-api-access';
export const DEFAULT_API_TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The kubelet-facing expiry upstream uses for the projected token (an hour and 7 s: marks "legacy-like" tokens). */
export const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 3607;
export const ROOT_CA_CONFIGMAP_NAME = 'kube-root-ca.crt';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
/** Live reads of a missing `default` ServiceAccount before the pod is refused. */
export const DEFAULT_SA_LOOKUP_ATTEMPTS = 10;

type Obj = Record<string, unknown>;

export interface ServiceAccountAdmissionOptions {
  /** The SA by namespace/name from the watch cache; undefined if it has none. */
  getServiceAccount(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** A live read (storage, not the cache); undefined if missing. @default getServiceAccount */
  getServiceAccountLive?(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Waits between live reads of a missing `default` SA. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
  /** Mount the token volume (upstream MountServiceAccountToken). @default true */
  mountServiceAccountToken?: boolean;
  /** The volume name suffix (tests). @default 5 random characters as generateName */
  generateVolumeName?: (prefix: string) => string;
}

/** The projected API access volume upstream's plugin adds (with the apiserver's defaulting applied). */
export function apiAccessVolume(name: string): Obj {
  return {
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, path: 'token' } },
        { configMap: { name: ROOT_CA_CONFIGMAP_NAME, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    },
  };
}

export class ServiceAccountAdmission implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly o: ServiceAccountAdmissionOptions) {}

  handles(op: AdmissionOperation): boolean { return op === 'CREATE'; }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.resource.group !== '' || a.resource.resource !== 'pods' || a.subresource !== '' || !a.object) return;
    const pod = a.object;
    if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return;
    const spec = ((pod['spec'] ??= {}) as Obj);
    if (!spec['serviceAccountName']) spec['serviceAccountName'] = (spec['serviceAccount'] as string | undefined) || DEFAULT_SERVICE_ACCOUNT_NAME;
    const saName = String(spec['serviceAccountName']);
    // The deprecated alias follows, as the apiserver's conversion keeps them equal.
    spec['serviceAccount'] = saName;
    const sa = await this.lookup(a.namespace, saName);
    if (!sa) {
      throw forbidden('pods', objectName(a), `error looking up service account ${a.namespace}/${saName}: ${errors.notFound('serviceaccount', saName).message}`);
    }
    if ((this.o.mountServiceAccountToken ?? true) && shouldAutomount(sa, spec)) this.mountToken(spec);
    const pullSecrets = Array.isArray(sa['imagePullSecrets']) ? sa['imagePullSecrets'] as Obj[] : [];
    if ((!Array.isArray(spec['imagePullSecrets']) || (spec['imagePullSecrets'] as unknown[]).length === 0) && pullSecrets.length > 0) {
      spec['imagePullSecrets'] = pullSecrets.map((s) => ({ name: s['name'] }));
    }
  }

  /**
   * The cache, then live reads: up to 10 for `default` (the serviceaccount controller is about to
   * create it in a new namespace), 100-200 ms apart, as upstream's getServiceAccount.
   */
  private async lookup(namespace: string, name: string): Promise<KubeObject | undefined> {
    const cached = await this.o.getServiceAccount(namespace, name);
    if (cached) return cached;
    const live = this.o.getServiceAccountLive ?? this.o.getServiceAccount;
    const sleep = this.o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const attempts = name === DEFAULT_SERVICE_ACCOUNT_NAME ? DEFAULT_SA_LOOKUP_ATTEMPTS : 1;
    const intervalMs = 100 + Math.floor(Math.random() * 100);
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await sleep(intervalMs);
      const sa = await live(namespace, name);
      if (sa) return sa;
    }
    return undefined;
  }

  private mountToken(spec: Obj): void {
    const volumes = Array.isArray(spec['volumes']) ? spec['volumes'] as Obj[] : [];
    const existing = volumes.find((v) => String(v['name'] ?? '').startsWith(`${SERVICE_ACCOUNT_VOLUME_NAME}-`));
    const volumeName = existing ? String(existing['name']) : (this.o.generateVolumeName ?? generateName)(`${SERVICE_ACCOUNT_VOLUME_NAME}-`);
    let needed = false;
    for (const key of ['initContainers', 'containers']) {
      for (const c of Array.isArray(spec[key]) ? spec[key] as Obj[] : []) {
        const mounts = Array.isArray(c['volumeMounts']) ? c['volumeMounts'] as Obj[] : [];
        // An existing mount at the token path wins (the user brought their own).
        if (mounts.some((m) => m['mountPath'] === DEFAULT_API_TOKEN_MOUNT_PATH)) continue;
        c['volumeMounts'] = [...mounts, { name: volumeName, readOnly: true, mountPath: DEFAULT_API_TOKEN_MOUNT_PATH }];
        needed = true;
      }
    }
    if (!existing && needed) spec['volumes'] = [...volumes, apiAccessVolume(volumeName)];
  }
}

/** The pod's preference wins, then the ServiceAccount's; default true. */
export function shouldAutomount(sa: KubeObject, podSpec: Obj): boolean {
  if (typeof podSpec['automountServiceAccountToken'] === 'boolean') return podSpec['automountServiceAccountToken'];
  if (typeof sa['automountServiceAccountToken'] === 'boolean') return sa['automountServiceAccountToken'] as boolean;
  return true;
}
