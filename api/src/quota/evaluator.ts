/**
 * What an object costs against a ResourceQuota, as upstream's pkg/quota/v1/evaluator/core: every
 * object counts as `count/<resource>[.<group>]`; the legacy core names (`services`, `secrets`,
 * `configmaps`, `replicationcontrollers`, `resourcequotas`, `persistentvolumeclaims`); pods their
 * compute (`pods`, `cpu`/`requests.cpu`, `limits.cpu`, memory, ephemeral-storage, hugepages and
 * extended `requests.*`) while not terminal; services their node ports and load balancers.
 * Pure; shared by the ResourceQuota admission plugin and the resource-quota controller.
 */
import type { ResourceDescriptor } from '../scheme.js';
import { addLists, maxLists, type ResourceAmounts } from './resource-list.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

type GroupResource = Pick<ResourceDescriptor, 'group' | 'resource'>;

/** Core resources that also count under their bare legacy name (pods count through `pods` as compute). */
const LEGACY_COUNTED = ['services', 'replicationcontrollers', 'resourcequotas', 'secrets', 'configmaps', 'persistentvolumeclaims'];

/** `count/<resource>` (core) or `count/<resource>.<group>`. */
export const objectCountName = (r: GroupResource): string => `count/${r.group ? `${r.resource}.${r.group}` : r.resource}`;

/** The resource (by group/resource) a quota resource name counts, if it is an object count. */
export function countedResource(name: string): { group: string; resource: string } | undefined {
  if (name.startsWith('count/')) {
    const rest = name.slice('count/'.length);
    const dot = rest.indexOf('.');
    return dot < 0 ? { group: '', resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
  }
  if (LEGACY_COUNTED.includes(name) || name === 'pods') return { group: '', resource: name };
  if (name === 'services.nodeports' || name === 'services.loadbalancers') return { group: '', resource: 'services' };
  if (isPvcName(name)) return { group: '', resource: 'persistentvolumeclaims' };
  return undefined;
}

const COMPUTE_NAMES = ['cpu', 'memory', 'ephemeral-storage'];
const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
/** PVC usage names: requests.storage, and per class `<class>.storageclass.storage.k8s.io/requests.storage|persistentvolumeclaims`. */
const isPvcName = (n: string): boolean => n === 'requests.storage' || n.includes(STORAGE_CLASS_SUFFIX);
const isPodComputeName = (n: string): boolean =>
  n === 'pods' || COMPUTE_NAMES.includes(n) || n.startsWith('requests.') || n.startsWith('limits.') || n.startsWith('hugepages-');

/** The quota resource names an object of r affects (upstream MatchingResources). */
export function matchesResourceName(r: GroupResource, name: string): boolean {
  if (name === objectCountName(r)) return true;
  if (r.group !== '') return false;
  if (r.resource === 'pods') return isPodComputeName(name);
  if (r.resource === 'persistentvolumeclaims') return name === 'persistentvolumeclaims' || isPvcName(name);
  if (r.resource === 'services') return name === 'services' || name === 'services.nodeports' || name === 'services.loadbalancers';
  return LEGACY_COUNTED.includes(r.resource) && name === r.resource;
}

/** QuotaV1Pod: a pod counts for compute until it is terminal (or past its deletion grace). */
export function podCountsForCompute(pod: Obj, nowMs: number): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const del = pod.metadata?.deletionTimestamp;
  if (del) {
    const grace = pod.metadata?.deletionGracePeriodSeconds ?? 0;
    if (nowMs > Date.parse(del) + grace * 1000) return false;
  }
  return true;
}

/** podComputeUsageHelper: the compute names a pod (or one container) with these requests/limits uses. */
export function computeUsage(requests: ResourceAmounts, limits: ResourceAmounts): ResourceAmounts {
  const out: ResourceAmounts = { pods: '1' };
  for (const n of COMPUTE_NAMES) {
    if (n in requests) { out[n] = requests[n]!; out[`requests.${n}`] = requests[n]!; }
    if (n in limits) out[`limits.${n}`] = limits[n]!;
  }
  for (const [n, v] of Object.entries(requests)) {
    if (n.startsWith('hugepages-')) { out[n] = v; out[`requests.${n}`] = v; }
    else if (!COMPUTE_NAMES.includes(n) && n.includes('/') && !n.startsWith('kubernetes.io/') && !n.startsWith('requests.')) out[`requests.${n}`] = v;
  }
  for (const [n, v] of Object.entries(limits)) if (n.startsWith('hugepages-')) out[`limits.${n}`] = v;
  return out;
}

/** The pod's effective requests and limits (app containers summed, init containers maxed, overhead added). */
export function podRequestsAndLimits(pod: Obj): { requests: ResourceAmounts; limits: ResourceAmounts } {
  let requests: ResourceAmounts = {}, limits: ResourceAmounts = {};
  for (const c of arr(pod.spec?.containers)) {
    requests = addLists(requests, c.resources?.requests);
    limits = addLists(limits, c.resources?.limits);
  }
  for (const c of arr(pod.spec?.initContainers)) {
    requests = maxLists(requests, c.resources?.requests);
    limits = maxLists(limits, c.resources?.limits);
  }
  if (isObj(pod.spec?.overhead)) { requests = addLists(requests, pod.spec.overhead); limits = addLists(limits, pod.spec.overhead); }
  return { requests, limits };
}

/** Usage: everything obj (of resource r) costs. */
export function usageOf(r: GroupResource, obj: Obj, nowMs: number): ResourceAmounts {
  let out: ResourceAmounts = { [objectCountName(r)]: '1' };
  if (r.group !== '') return out;
  if (r.resource === 'pods') {
    if (!podCountsForCompute(obj, nowMs)) return out;
    const { requests, limits } = podRequestsAndLimits(obj);
    return addLists(out, computeUsage(requests, limits));
  }
  if (LEGACY_COUNTED.includes(r.resource)) out[r.resource] = '1';
  if (r.resource === 'persistentvolumeclaims') {
    const storage = obj.spec?.resources?.requests?.storage;
    const sc = obj.spec?.storageClassName;
    if (storage !== undefined) out['requests.storage'] = String(storage);
    if (sc) {
      out[`${sc}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`] = '1';
      if (storage !== undefined) out[`${sc}${STORAGE_CLASS_SUFFIX}requests.storage`] = String(storage);
    }
  }
  if (r.resource === 'services') {
    const type = obj.spec?.type;
    const ports = arr(obj.spec?.ports);
    let nodePorts = 0;
    if (type === 'NodePort' || type === 'LoadBalancer') nodePorts = ports.length;
    out = { ...out, 'services.nodeports': String(nodePorts), 'services.loadbalancers': type === 'LoadBalancer' ? '1' : '0' };
  }
  return out;
}

/** The resource names quota scopes can restrict (pods only, as upstream). */
export type QuotaScope = 'Terminating' | 'NotTerminating' | 'BestEffort' | 'NotBestEffort' | 'PriorityClass' | 'CrossNamespacePodAffinity';
export const QUOTA_SCOPES: readonly QuotaScope[] = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'];

const isBestEffort = (pod: Obj): boolean => {
  const all = [...arr(pod.spec?.containers), ...arr(pod.spec?.initContainers)];
  return all.every((c) => Object.keys(c.resources?.requests ?? {}).length === 0 && Object.keys(c.resources?.limits ?? {}).length === 0);
};

/** Whether obj (of r) falls under the quota's scopes (spec.scopes and spec.scopeSelector). Non-pods match only unscoped quotas. */
export function matchesScopes(quota: Obj, r: GroupResource, obj: Obj): boolean {
  const scopes: { scope: string; operator?: string; values?: string[] }[] = [
    ...((quota.spec?.scopes ?? []) as string[]).map((s) => ({ scope: s })),
    ...arr(quota.spec?.scopeSelector?.matchExpressions).map((e) => ({ scope: String(e.scopeName), operator: e.operator, values: e.values })),
  ];
  if (scopes.length === 0) return true;
  if (r.group !== '' || r.resource !== 'pods') return false;
  return scopes.every((s) => {
    switch (s.scope) {
      case 'Terminating': return obj.spec?.activeDeadlineSeconds != null;
      case 'NotTerminating': return obj.spec?.activeDeadlineSeconds == null;
      case 'BestEffort': return isBestEffort(obj);
      case 'NotBestEffort': return !isBestEffort(obj);
      case 'PriorityClass': {
        const pc = obj.spec?.priorityClassName ?? '';
        const vals = s.values ?? [];
        if (s.operator === 'In') return vals.includes(pc);
        if (s.operator === 'NotIn') return !vals.includes(pc);
        if (s.operator === 'Exists') return pc !== '';
        if (s.operator === 'DoesNotExist') return pc === '';
        return pc !== '';
      }
      default: return false;
    }
  });
}

/** What a quota's hard limits make of obj: its usage, masked to the quota's resources. */
export function quotaUsage(quota: Obj, r: GroupResource, obj: Obj, nowMs: number): ResourceAmounts {
  const hard = Object.keys(quota.status?.hard ?? quota.spec?.hard ?? {});
  const u = usageOf(r, obj, nowMs);
  const out: ResourceAmounts = {};
  for (const n of hard) if (n in u && matchesResourceName(r, n)) out[n] = u[n]!;
  return out;
}

const VALIDATION_SET = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

/**
 * podEvaluator.Constraints: when a quota limits cpu or memory, every container must state the
 * request/limit it limits. Returns upstream's "must specify ..." text, or undefined.
 */
export function podConstraints(required: readonly string[], p: Obj): string | undefined {
  const req = required.filter((n) => VALIDATION_SET.includes(n));
  if (req.length === 0) return undefined;
  const missing = new Map<string, Set<string>>();
  for (const c of [...arr(p.spec?.containers), ...arr(p.spec?.initContainers)]) {
    const have = computeUsage(c.resources?.requests ?? {}, c.resources?.limits ?? {});
    for (const n of req) if (!(n in have)) (missing.get(n) ?? missing.set(n, new Set()).get(n)!).add(String(c.name));
  }
  if (missing.size === 0) return undefined;
  return `must specify ${[...missing.keys()].sort().map((n) => `${n} for: ${[...missing.get(n)!].sort().join(',')}`).join('; ')}`;
}
