/**
 * Pod and pod-template defaults, as upstream's core/v1 SetDefaults_PodSpec, SetDefaults_Container,
 * SetDefaults_Probe, ... plus what the default admission chain adds to a Pod on create
 * (ServiceAccount, Priority, DefaultTolerationSeconds). All functions mutate their argument.
 */
import { canonicalQuantity, isValidQuantity } from '../quantity.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
export const DEFAULT_TOLERATION_SECONDS = 300;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** The tag kubelet-style image parsing finds: 'latest' when neither tag nor digest is given. */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const named = at >= 0 ? image.slice(0, at) : image;
  const slash = named.lastIndexOf('/');
  const colon = named.lastIndexOf(':');
  if (colon > slash) return named.slice(colon + 1);
  return at >= 0 ? '' : 'latest';
}

/** SetDefaults_Container imagePullPolicy: Always for ':latest' or untagged images, else IfNotPresent. */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  return imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
}

/** Rewrites valid quantities in a ResourceList to upstream's canonical form; leaves invalid ones for validation. */
export function canonicalizeResourceList(list: unknown): void {
  if (!isObj(list)) return;
  for (const [k, v] of Object.entries(list)) {
    if ((typeof v === 'string' || typeof v === 'number') && isValidQuantity(v)) list[k] = canonicalQuantity(v);
  }
}

function defaultHTTPGet(h: unknown): void {
  if (!isObj(h)) return;
  h.path ??= '/';
  h.scheme ??= 'HTTP';
}

function defaultProbe(p: unknown): void {
  if (!isObj(p)) return;
  // Zero counts as unset, as in upstream (the Go fields are plain int32 there).
  if (!p.timeoutSeconds) p.timeoutSeconds = 1;
  if (!p.periodSeconds) p.periodSeconds = 10;
  if (!p.successThreshold) p.successThreshold = 1;
  if (!p.failureThreshold) p.failureThreshold = 3;
  defaultHTTPGet(p.httpGet);
  if (isObj(p.grpc)) p.grpc.service ??= '';
}

function defaultLifecycle(l: unknown): void {
  if (!isObj(l)) return;
  for (const h of [l.postStart, l.preStop]) if (isObj(h)) defaultHTTPGet(h.httpGet);
}

function defaultEnv(env: unknown): void {
  for (const e of arr(env)) {
    const vf = e.valueFrom;
    if (!isObj(vf)) continue;
    if (isObj(vf.fieldRef)) vf.fieldRef.apiVersion ??= 'v1';
    if (isObj(vf.resourceFieldRef)) vf.resourceFieldRef.divisor ??= '0';
  }
}

/** SetDefaults_Container (+ its ports, probes, lifecycle, env). */
export function defaultContainer(c: Obj, hostNetwork: boolean): void {
  // An unparsable or missing image defaults to IfNotPresent; validation reports the image.
  if (!c.imagePullPolicy) c.imagePullPolicy = typeof c.image === 'string' && c.image ? defaultImagePullPolicy(c.image) : 'IfNotPresent';
  c.terminationMessagePath ||= '/dev/termination-log';
  c.terminationMessagePolicy ||= 'File';
  for (const p of arr(c.ports)) {
    p.protocol ||= 'TCP';
    if (hostNetwork && p.hostPort === undefined) p.hostPort = p.containerPort;
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  defaultLifecycle(c.lifecycle);
  defaultEnv(c.env);
  if (isObj(c.resources)) {
    canonicalizeResourceList(c.resources.limits);
    canonicalizeResourceList(c.resources.requests);
  }
}

/** SetDefaults_Volume and the per-source defaults (defaultMode 0644, emptyDir when no source). */
function defaultVolume(v: Obj): void {
  const sources = Object.keys(v).filter((k) => k !== 'name');
  if (sources.length === 0) v.emptyDir = {};
  for (const k of ['secret', 'configMap', 'downwardAPI', 'projected'] as const) {
    if (isObj(v[k])) v[k].defaultMode ??= 0o644;
  }
  if (isObj(v.hostPath)) v.hostPath.type ??= '';
  if (isObj(v.downwardAPI)) for (const i of arr(v.downwardAPI.items)) if (isObj(i.fieldRef)) i.fieldRef.apiVersion ??= 'v1';
  if (isObj(v.projected)) {
    for (const s of arr(v.projected.sources)) {
      if (isObj(s.serviceAccountToken)) s.serviceAccountToken.expirationSeconds ??= 3600;
      if (isObj(s.downwardAPI)) for (const i of arr(s.downwardAPI.items)) if (isObj(i.fieldRef)) i.fieldRef.apiVersion ??= 'v1';
    }
  }
}

/** SetDefaults_PodSpec and everything below it. Applies to Pods and to pod templates alike. */
export function defaultPodSpec(spec: Obj): void {
  spec.dnsPolicy ||= 'ClusterFirst';
  spec.restartPolicy ||= 'Always';
  if (!isObj(spec.securityContext)) spec.securityContext = {};
  spec.terminationGracePeriodSeconds ??= DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  spec.schedulerName ||= DEFAULT_SCHEDULER_NAME;
  const hostNetwork = spec.hostNetwork === true;
  for (const list of [spec.initContainers, spec.containers, spec.ephemeralContainers]) {
    for (const c of arr(list)) defaultContainer(c, hostNetwork);
  }
  for (const v of arr(spec.volumes)) defaultVolume(v);
}

/** SetDefaults_Pod on top of the spec defaults: requests default to limits; enableServiceLinks. */
export function defaultPod(pod: Obj): void {
  if (!isObj(pod.spec)) pod.spec = {};
  const spec = pod.spec as Obj;
  for (const c of [...arr(spec.initContainers), ...arr(spec.containers)]) {
    const r = c.resources;
    if (!isObj(r) || !isObj(r.limits)) continue;
    if (!isObj(r.requests)) r.requests = {};
    for (const [k, v] of Object.entries(r.limits)) if (!(k in r.requests)) r.requests[k] = v;
  }
  defaultPodSpec(spec);
  spec.enableServiceLinks ??= true;
}

/**
 * What the default admission plugins add to a new Pod: serviceAccountName (and the deprecated
 * serviceAccount mirror), priority 0 with PreemptLowerPriority, and the not-ready/unreachable
 * NoExecute tolerations of 300s. Idempotent.
 */
export function admitPodDefaults(pod: Obj): void {
  if (!isObj(pod.spec)) pod.spec = {};
  const spec = pod.spec as Obj;
  spec.serviceAccountName ||= spec.serviceAccount || 'default';
  spec.serviceAccount ||= spec.serviceAccountName;
  if (!spec.priorityClassName) spec.priority ??= 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  const tolerations: Obj[] = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    const covered = tolerations.some((t) => isObj(t) && (t.key === key || (t.key === undefined && t.operator === 'Exists')) && (t.effect === undefined || t.effect === '' || t.effect === 'NoExecute'));
    if (!covered) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: DEFAULT_TOLERATION_SECONDS });
  }
  spec.tolerations = tolerations;
}

/** Pod QoS class, as upstream's qos.GetPodQOS (Guaranteed / Burstable / BestEffort). */
export function podQOSClass(pod: Obj): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...arr(pod.spec?.initContainers), ...arr(pod.spec?.containers)];
  let anySet = false;
  let guaranteed = true;
  for (const c of containers) {
    const req: Obj = isObj(c.resources?.requests) ? c.resources.requests : {};
    const lim: Obj = isObj(c.resources?.limits) ? c.resources.limits : {};
    const nonZero = (v: unknown) => typeof v === 'string' || typeof v === 'number' ? v !== 0 && !/^[+-]?0*(\.0*)?[a-zA-Z]*$/.test(String(v)) : false;
    for (const r of ['cpu', 'memory']) {
      if (nonZero(req[r]) || nonZero(lim[r])) anySet = true;
      if (!nonZero(lim[r])) guaranteed = false;
      else if (req[r] !== undefined && canonicalOrSelf(req[r]) !== canonicalOrSelf(lim[r])) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const canonicalOrSelf = (v: unknown): string => (isValidQuantity(v as string) ? canonicalQuantity(v as string) : String(v));
