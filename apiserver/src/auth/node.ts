/**
 * The Node authorizer (plugin/pkg/auth/authorizer/node): a kubelet (user system:node:<name> in
 * group system:nodes) may read a Secret, ConfigMap or PersistentVolumeClaim only when a pod bound
 * to its node references it. Everything else is left to RBAC (the system:node role) and to the
 * NodeRestriction admission plugin, which limits writes to the node's own objects.
 */
import type { KubeObject } from '@mk8s/api';
import type { UserInfo } from './authentication.js';
import type { AuthorizationAttributes, Authorizer, Decision } from './authorization.js';

export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';

/** The node name of a kubelet identity, or undefined for any other user. */
export function nodeNameOf(user: UserInfo): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.username.startsWith(NODE_USER_PREFIX)) return undefined;
  const n = user.username.slice(NODE_USER_PREFIX.length);
  return n === '' ? undefined : n;
}

type Obj = Record<string, unknown>;

/** Names of secrets, configmaps and PVCs a pod uses (volumes, projected sources, env, envFrom, imagePullSecrets). */
export function podReferences(pod: KubeObject): { secrets: Set<string>; configmaps: Set<string>; persistentvolumeclaims: Set<string> } {
  const out = { secrets: new Set<string>(), configmaps: new Set<string>(), persistentvolumeclaims: new Set<string>() };
  const spec = (pod['spec'] ?? {}) as Obj;
  const arr = (v: unknown) => (Array.isArray(v) ? v as Obj[] : []);
  for (const s of arr(spec['imagePullSecrets'])) if (typeof s['name'] === 'string') out.secrets.add(s['name']);
  for (const v of arr(spec['volumes'])) {
    const secret = v['secret'] as Obj | undefined; if (typeof secret?.['secretName'] === 'string') out.secrets.add(secret['secretName']);
    const cm = v['configMap'] as Obj | undefined; if (typeof cm?.['name'] === 'string') out.configmaps.add(cm['name']);
    const pvc = v['persistentVolumeClaim'] as Obj | undefined; if (typeof pvc?.['claimName'] === 'string') out.persistentvolumeclaims.add(pvc['claimName']);
    for (const src of arr((v['projected'] as Obj | undefined)?.['sources'])) {
      const ps = src['secret'] as Obj | undefined; if (typeof ps?.['name'] === 'string') out.secrets.add(ps['name']);
      const pc = src['configMap'] as Obj | undefined; if (typeof pc?.['name'] === 'string') out.configmaps.add(pc['name']);
    }
  }
  for (const c of [...arr(spec['initContainers']), ...arr(spec['containers']), ...arr(spec['ephemeralContainers'])]) {
    for (const e of arr(c['envFrom'])) {
      const s = e['secretRef'] as Obj | undefined; if (typeof s?.['name'] === 'string') out.secrets.add(s['name']);
      const m = e['configMapRef'] as Obj | undefined; if (typeof m?.['name'] === 'string') out.configmaps.add(m['name']);
    }
    for (const e of arr(c['env'])) {
      const vf = (e['valueFrom'] ?? {}) as Obj;
      const s = vf['secretKeyRef'] as Obj | undefined; if (typeof s?.['name'] === 'string') out.secrets.add(s['name']);
      const m = vf['configMapKeyRef'] as Obj | undefined; if (typeof m?.['name'] === 'string') out.configmaps.add(m['name']);
    }
  }
  return out;
}

const GUARDED = new Set(['secrets', 'configmaps', 'persistentvolumeclaims']);

export class NodeAuthorizer implements Authorizer {
  readonly name = 'Node';
  /** podsOnNode lists the pods bound to a node in a namespace (served from the watch cache). */
  constructor(private readonly podsOnNode: (nodeName: string, namespace: string) => Promise<KubeObject[]>) {}

  async authorize(a: AuthorizationAttributes): Promise<{ decision: Decision; reason?: string }> {
    const node = nodeNameOf(a.user);
    if (node === undefined || !a.resourceRequest || a.apiGroup !== '' || !GUARDED.has(a.resource ?? '')) return { decision: 'NoOpinion' };
    const noRelation = { decision: 'NoOpinion' as const, reason: `no relationship found between node '${node}' and this object` };
    // Only single-object reads: a kubelet never lists or watches every secret.
    if (a.verb !== 'get' || !a.name || a.subresource) return noRelation;
    const kind = a.resource as 'secrets' | 'configmaps' | 'persistentvolumeclaims';
    for (const pod of await this.podsOnNode(node, a.namespace ?? '')) {
      if (podReferences(pod)[kind].has(a.name)) return { decision: 'Allow' };
    }
    return noRelation;
  }
}
