/**
 * Server-side defaulting for every served resource, as upstream's SetDefaults_* functions plus the
 * create-time fields the registry strategies / default admission set (namespace finalizers and
 * phase, pod service account and priority). The apiserver calls applyDefaults on every decoded
 * create/update body before validation.
 */
import type { ResourceDescriptor } from '../scheme.js';
import { defaultCronJob, defaultJob } from './batch.js';
import { defaultLimitRangeItem } from '../quota/limit-ranger.js';
import { defaultDaemonSet, defaultStatefulSet } from './apps-workloads.js';
import { admitPodDefaults, canonicalizeResourceList, defaultPod, defaultPodSpec } from './pod.js';
import { defaultHorizontalPodAutoscaler } from './autoscaling.js';
import { defaultPersistentVolume, defaultPersistentVolumeClaim, defaultStorageClass } from './storage.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** Defaults a PodTemplateSpec in place (template metadata untouched, spec as a pod's). */
export function defaultPodTemplate(t: unknown): void {
  if (!isObj(t)) return;
  if (!isObj(t.spec)) t.spec = {};
  defaultPodSpec(t.spec);
}

function defaultService(svc: Obj): void {
  const spec: Obj = isObj(svc.spec) ? svc.spec : (svc.spec = {});
  spec.type ||= 'ClusterIP';
  spec.sessionAffinity ||= 'None';
  if (spec.sessionAffinity === 'ClientIP') {
    spec.sessionAffinityConfig ??= {};
    spec.sessionAffinityConfig.clientIP ??= {};
    spec.sessionAffinityConfig.clientIP.timeoutSeconds ??= 10800;
  }
  for (const p of arr(spec.ports)) {
    p.protocol ||= 'TCP';
    // targetPort defaults to port (unset, 0 or ''), as upstream's SetDefaults_Service.
    if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') spec.externalTrafficPolicy ||= 'Cluster';
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  if (spec.type !== 'ExternalName') {
    spec.internalTrafficPolicy ??= 'Cluster';
    // The registry picks the family; this cluster is IPv4 single-stack.
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.ipFamilies ??= ['IPv4'];
  }
  if (!isObj(svc.status)) svc.status = { loadBalancer: {} };
}

function defaultDeployment(d: Obj): void {
  const spec: Obj = isObj(d.spec) ? d.spec : (d.spec = {});
  spec.replicas ??= 1;
  const strategy: Obj = isObj(spec.strategy) ? spec.strategy : (spec.strategy = {});
  strategy.type ||= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru: Obj = isObj(strategy.rollingUpdate) ? strategy.rollingUpdate : (strategy.rollingUpdate = {});
    ru.maxUnavailable ??= '25%';
    ru.maxSurge ??= '25%';
  }
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  defaultPodTemplate(spec.template ??= {});
}

function defaultReplicaSet(rs: Obj): void {
  const spec: Obj = isObj(rs.spec) ? rs.spec : (rs.spec = {});
  spec.replicas ??= 1;
  defaultPodTemplate(spec.template ??= {});
}

/** SetDefaults_ReplicationController: selector and labels from the template's labels; replicas 1. */
function defaultReplicationController(rc: Obj): void {
  const spec: Obj = isObj(rc.spec) ? rc.spec : (rc.spec = {});
  const labels = isObj(spec.template) && isObj(spec.template.metadata) && isObj(spec.template.metadata.labels) ? spec.template.metadata.labels : undefined;
  if (labels) {
    if (!isObj(spec.selector) || Object.keys(spec.selector).length === 0) spec.selector = { ...labels };
    const meta: Obj = isObj(rc.metadata) ? rc.metadata : (rc.metadata = {});
    if (!isObj(meta.labels) || Object.keys(meta.labels).length === 0) meta.labels = { ...labels };
  }
  spec.replicas ??= 1;
  if (isObj(spec.template)) defaultPodTemplate(spec.template);
}

function defaultNamespace(ns: Obj): void {
  const meta: Obj = isObj(ns.metadata) ? ns.metadata : (ns.metadata = {});
  // Since 1.21 every namespace carries its name as a label (NamespaceDefaultLabelName).
  if (typeof meta.name === 'string' && meta.name) {
    meta.labels = { ...(isObj(meta.labels) ? meta.labels : {}), 'kubernetes.io/metadata.name': meta.name };
  }
  const spec: Obj = isObj(ns.spec) ? ns.spec : (ns.spec = {});
  spec.finalizers ??= ['kubernetes'];
  const status: Obj = isObj(ns.status) ? ns.status : (ns.status = {});
  status.phase ||= 'Active';
}

function defaultNode(n: Obj): void {
  const status = n.status;
  if (!isObj(status)) return;
  canonicalizeResourceList(status.capacity);
  if (status.allocatable === undefined && isObj(status.capacity)) status.allocatable = { ...status.capacity };
  canonicalizeResourceList(status.allocatable);
}

function defaultSecret(s: Obj): void {
  s.type ||= 'Opaque';
  // Upstream's v1→internal conversion folds write-only stringData into data (stringData wins).
  if (isObj(s.stringData)) {
    const data: Obj = isObj(s.data) ? s.data : {};
    for (const [k, v] of Object.entries(s.stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    s.data = data;
    delete s.stringData;
  }
}

function defaultEndpoints(e: Obj): void {
  for (const ss of arr(e.subsets)) for (const p of arr(ss.ports)) p.protocol ||= 'TCP';
}

function defaultEndpointSlice(e: Obj): void {
  for (const p of arr(e.ports)) { p.name ??= ''; p.protocol ??= 'TCP'; }
}

function defaultPriorityClass(p: Obj): void { p.preemptionPolicy ??= 'PreemptLowerPriority'; }

/** rbac/v1 SetDefaults_Subject and the roleRef group. */
function defaultBinding(b: Obj): void {
  if (isObj(b.roleRef)) b.roleRef.apiGroup ||= 'rbac.authorization.k8s.io';
  for (const s of arr(b.subjects)) {
    if (s.apiGroup) continue;
    if (s.kind === 'ServiceAccount') s.apiGroup = '';
    else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = 'rbac.authorization.k8s.io';
  }
}

const BY_RESOURCE: Record<string, (o: Obj) => void> = {
  '/pods': (o) => { defaultPod(o); admitPodDefaults(o); },
  '/services': defaultService,
  '/namespaces': defaultNamespace,
  '/nodes': defaultNode,
  '/secrets': defaultSecret,
  '/endpoints': defaultEndpoints,
  'apps/deployments': defaultDeployment,
  '/replicationcontrollers': defaultReplicationController,
  '/limitranges': (lr) => { for (const item of arr(lr.spec?.limits)) { defaultLimitRangeItem(item); for (const k of ['min', 'max', 'default', 'defaultRequest', 'maxLimitRequestRatio']) canonicalizeResourceList(item[k]); } },
  '/resourcequotas': (rq) => { canonicalizeResourceList(rq.spec?.hard); canonicalizeResourceList(rq.status?.hard); canonicalizeResourceList(rq.status?.used); },
  '/podtemplates': (pt) => { if (isObj(pt.template)) defaultPodTemplate(pt.template); },
  'apps/replicasets': defaultReplicaSet,
  'apps/daemonsets': (o) => defaultDaemonSet(o, defaultPodTemplate),
  'apps/statefulsets': (o) => defaultStatefulSet(o, defaultPodTemplate),
  'discovery.k8s.io/endpointslices': defaultEndpointSlice,
  'scheduling.k8s.io/priorityclasses': defaultPriorityClass,
  'rbac.authorization.k8s.io/rolebindings': defaultBinding,
  'rbac.authorization.k8s.io/clusterrolebindings': defaultBinding,
  'batch/jobs': (o) => defaultJob(o, defaultPodTemplate),
  'batch/cronjobs': (o) => defaultCronJob(o, defaultPodTemplate),
  '/persistentvolumes': defaultPersistentVolume,
  '/persistentvolumeclaims': defaultPersistentVolumeClaim,
  'storage.k8s.io/storageclasses': defaultStorageClass,
  'autoscaling/horizontalpodautoscalers': defaultHorizontalPodAutoscaler,
};

/**
 * Returns a defaulted deep copy of obj (obj itself is not touched). Idempotent: defaults only
 * fill absent fields. Resources without defaults (ConfigMap, Lease, ServiceAccount) come back
 * as a plain copy.
 */
export function applyDefaults<T>(resource: Pick<ResourceDescriptor, 'group' | 'resource'>, obj: T): T {
  return applyDefaultsInPlace(resource, structuredClone(obj));
}

/**
 * applyDefaults without the copy: fills obj's absent fields and returns obj. For callers that own
 * obj (the apiserver's create/update pipeline works on its own copy already; a deep copy per write
 * was a measurable share of its CPU).
 */
export function applyDefaultsInPlace<T>(resource: Pick<ResourceDescriptor, 'group' | 'resource'>, obj: T): T {
  if (!isObj(obj)) return obj;
  BY_RESOURCE[`${resource.group}/${resource.resource}`]?.(obj);
  return obj;
}
