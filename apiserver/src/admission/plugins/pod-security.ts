/**
 * PodSecurity admission (upstream k8s.io/pod-security-admission, built into kube-apiserver): the
 * namespace labels `pod-security.kubernetes.io/{enforce,warn,audit}[-version]` pick a Pod
 * Security Standard level per mode. Pods violating the enforce level are refused (403, upstream's
 * message); the warn level adds `Warning` headers; audit is logged. Workload resources (their pod
 * template) get warnings only. Changing a namespace's enforce label warns about existing pods that
 * would violate it. Defaults (no labels) are privileged:latest for every mode, as upstream's.
 */
import { errors, type KubeObject } from '@mk8s/api';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';
import { forbidden } from './namespace-lifecycle.js';
import { evaluatePod, POD_SECURITY_LEVELS, type PodSecurityLevel } from './pod-security-policy.js';

export const NAME = 'PodSecurity';
export const LABEL_PREFIX = 'pod-security.kubernetes.io/';
export type PodSecurityMode = 'enforce' | 'warn' | 'audit';
const MODES: readonly PodSecurityMode[] = ['enforce', 'audit', 'warn'];

type Obj = Record<string, unknown>;

export interface LevelVersion { level: PodSecurityLevel; version: string }
export type NamespacePolicy = Record<PodSecurityMode, LevelVersion>;
const str = (lv: LevelVersion) => `${lv.level}:${lv.version}`;

/** Resources whose pod template is checked (warn/audit only), with where the template lives. */
const WORKLOADS: Record<string, (o: Obj) => Obj | undefined> = {
  'apps/deployments': (o) => tpl((o['spec'] as Obj | undefined)?.['template']),
  'apps/replicasets': (o) => tpl((o['spec'] as Obj | undefined)?.['template']),
  'apps/statefulsets': (o) => tpl((o['spec'] as Obj | undefined)?.['template']),
  'apps/daemonsets': (o) => tpl((o['spec'] as Obj | undefined)?.['template']),
  'batch/jobs': (o) => tpl((o['spec'] as Obj | undefined)?.['template']),
  'batch/cronjobs': (o) => tpl(((((o['spec'] as Obj | undefined)?.['jobTemplate'] as Obj | undefined)?.['spec']) as Obj | undefined)?.['template']),
  '/replicationcontrollers': (o) => tpl((o['spec'] as Obj | undefined)?.['template']),
  '/podtemplates': (o) => tpl(o['template']),
};
function tpl(t: unknown): Obj | undefined { return t && typeof t === 'object' ? t as Obj : undefined; }

const VERSION_RE = /^v1\.(0|[1-9][0-9]*)$/;

/** Upstream's built-in defaults: every mode privileged:latest. */
export const PRIVILEGED_POLICY: NamespacePolicy = {
  enforce: { level: 'privileged', version: 'latest' }, audit: { level: 'privileged', version: 'latest' }, warn: { level: 'privileged', version: 'latest' },
};

/** PodSecurityConfiguration.defaults: the policy of a namespace without labels. */
export type PodSecurityDefaults = Partial<Record<'enforce' | 'enforce-version' | 'audit' | 'audit-version' | 'warn' | 'warn-version', string>>;
/** PodSecurityConfiguration.exemptions: requests never checked. */
export interface PodSecurityExemptions { usernames?: string[]; namespaces?: string[]; runtimeClasses?: string[] }

/** The defaults as a policy; throws on an invalid level or version (the server must not start). */
export function defaultPolicy(d: PodSecurityDefaults = {}): NamespacePolicy {
  const labels = Object.fromEntries(Object.entries(d).map(([k, v]) => [`${LABEL_PREFIX}${k}`, v]));
  const { policy, errs } = policyToEvaluate(labels);
  if (errs.length) throw new Error(`invalid PodSecurity defaults: ${errs.join('; ')}`);
  return policy;
}

/**
 * api.PolicyToEvaluate: labels over the defaults (privileged:latest). An invalid enforce level
 * fails closed (restricted); invalid warn/audit levels fail open (privileged); an invalid version
 * is latest. Errors come back as field messages for namespace validation.
 */
export function policyToEvaluate(labels: Record<string, string> | undefined, defaults: NamespacePolicy = PRIVILEGED_POLICY): { policy: NamespacePolicy; errs: string[] } {
  const policy: NamespacePolicy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errs: string[] = [];
  for (const mode of MODES) {
    const level = labels?.[`${LABEL_PREFIX}${mode}`];
    if (level !== undefined) {
      if ((POD_SECURITY_LEVELS as readonly string[]).includes(level)) policy[mode].level = level as PodSecurityLevel;
      else {
        policy[mode].level = mode === 'enforce' ? 'restricted' : 'privileged';
        errs.push(`metadata.labels[${LABEL_PREFIX}${mode}]: Invalid value: ${JSON.stringify(level)}: must be one of privileged, baseline, restricted`);
      }
    }
    const version = labels?.[`${LABEL_PREFIX}${mode}-version`];
    if (version !== undefined) {
      if (version === 'latest' || VERSION_RE.test(version)) policy[mode].version = version;
      else errs.push(`metadata.labels[${LABEL_PREFIX}${mode}-version]: Invalid value: ${JSON.stringify(version)}: must be "latest" or "v1.x"`);
    }
  }
  return { policy, errs };
}

export interface PodSecurityOptions {
  /** The namespace by name; undefined when missing (NamespaceLifecycle answers that case). */
  getNamespace(name: string): Promise<KubeObject | undefined>;
  /** Pods of a namespace (for the warnings when an enforce label changes). */
  listPods(namespace: string): Promise<KubeObject[]>;
  /** Audit-mode violations go here. @default dropped */
  audit?: (entry: { namespace: string; resource: string; name: string; message: string }) => void;
  /** The levels of a namespace without labels. @default privileged:latest for every mode */
  defaults?: PodSecurityDefaults;
  /** Users, namespaces and runtime classes never checked. @default none */
  exemptions?: PodSecurityExemptions;
}

/** Upstream caps how many existing pods a namespace label change evaluates. */
const NAMESPACE_MAX_PODS_TO_CHECK = 3000;

export class PodSecurity implements AdmissionPlugin {
  readonly name = NAME;
  private readonly defaults: NamespacePolicy;
  constructor(private readonly o: PodSecurityOptions) {
    this.defaults = defaultPolicy(o.defaults);
  }

  handles(op: AdmissionOperation): boolean { return op === 'CREATE' || op === 'UPDATE'; }

  async validate(a: AdmissionAttributes): Promise<void> {
    const r = a.resource;
    if (r.group === '' && r.resource === 'namespaces') return this.validateNamespace(a);
    if (!a.object || !r.namespaced) return;
    if (this.o.exemptions?.usernames?.includes(a.user.username) || this.o.exemptions?.namespaces?.includes(a.namespace)) return;
    if (r.group === '' && r.resource === 'pods') {
      if (a.subresource !== '' && a.subresource !== 'ephemeralcontainers') return;
      if (a.operation === 'UPDATE' && a.oldObject && !isSignificantPodUpdate(a.object, a.oldObject)) return;
      const spec = (a.object['spec'] ?? {}) as Obj;
      return this.evaluate(a, a.object.metadata as unknown as Obj, spec, true);
    }
    const extract = WORKLOADS[`${r.group}/${r.resource}`];
    if (!extract || a.subresource !== '') return;
    const template = extract(a.object as Obj);
    if (!template) return;
    // Like upstream, only changes of the template matter on update.
    if (a.operation === 'UPDATE' && a.oldObject && JSON.stringify(extract(a.oldObject as Obj)) === JSON.stringify(template)) return;
    return this.evaluate(a, (template['metadata'] ?? {}) as Obj, (template['spec'] ?? {}) as Obj, false);
  }

  private async evaluate(a: AdmissionAttributes, meta: Obj, spec: Obj, enforce: boolean): Promise<void> {
    const runtimeClass = spec['runtimeClassName'];
    if (typeof runtimeClass === 'string' && runtimeClass && this.o.exemptions?.runtimeClasses?.includes(runtimeClass)) return;
    const ns = await this.o.getNamespace(a.namespace);
    if (!ns) return;
    const { policy } = policyToEvaluate(ns.metadata.labels, this.defaults);
    if (policy.enforce.level === 'privileged' && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const cache = new Map<PodSecurityLevel, ReturnType<typeof evaluatePod>>();
    const run = (level: PodSecurityLevel) => {
      let res = cache.get(level);
      if (!res) { res = evaluatePod(level, meta, spec); cache.set(level, res); }
      return res;
    };
    if (enforce) {
      const res = run(policy.enforce.level);
      if (!res.allowed) throw forbidden(qualified(a), objectName(a), `violates PodSecurity ${JSON.stringify(str(policy.enforce))}: ${res.detail}`);
    }
    const audit = run(policy.audit.level);
    if (!audit.allowed) {
      this.o.audit?.({ namespace: a.namespace, resource: qualified(a), name: objectName(a), message: `would violate PodSecurity ${JSON.stringify(str(policy.audit))}: ${audit.detail}` });
    }
    const warn = run(policy.warn.level);
    if (!warn.allowed) addWarning(a, `would violate PodSecurity ${JSON.stringify(str(policy.warn))}: ${warn.detail}`);
  }

  /** Labels must parse; a changed enforce level is checked against the namespace's pods (warnings only). */
  private async validateNamespace(a: AdmissionAttributes): Promise<void> {
    if (!a.object || a.subresource !== '') return;
    const { policy, errs } = policyToEvaluate(a.object.metadata.labels, this.defaults);
    if (errs.length) {
      throw errors.invalid('Namespace', '', a.object.metadata.name, errs.map((message) => ({
        reason: 'FieldValueInvalid', field: message.slice(0, message.indexOf(': ')), message,
      })));
    }
    if (a.operation !== 'UPDATE' || !a.oldObject) return;
    const old = policyToEvaluate(a.oldObject.metadata.labels, this.defaults).policy;
    if (str(old.enforce) === str(policy.enforce) || policy.enforce.level === 'privileged') return;
    if (this.o.exemptions?.namespaces?.includes(a.name)) return;
    const pods = (await this.o.listPods(a.name)).sort((x, y) => (x.metadata.name < y.metadata.name ? -1 : 1));
    const checked = pods.slice(0, NAMESPACE_MAX_PODS_TO_CHECK);
    const byReason = new Map<string, { first: string; count: number }>();
    for (const p of checked) {
      const rc = ((p['spec'] ?? {}) as Obj)['runtimeClassName'];
      if (typeof rc === 'string' && rc && this.o.exemptions?.runtimeClasses?.includes(rc)) continue;
      const res = evaluatePod(policy.enforce.level, p.metadata as unknown as Obj, (p['spec'] ?? {}) as Obj);
      if (res.allowed) continue;
      const key = res.reasons.join(', ');
      const seen = byReason.get(key);
      if (!seen) byReason.set(key, { first: p.metadata.name, count: 1 });
      else { seen.count++; if (p.metadata.name < seen.first) seen.first = p.metadata.name; }
    }
    if (checked.length < pods.length) addWarning(a, `new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`);
    if (byReason.size === 0) return;
    addWarning(a, `existing pods in namespace ${JSON.stringify(a.name)} violate the new PodSecurity enforce level ${JSON.stringify(str(policy.enforce))}`);
    const lines = [...byReason].map(([reason, c]) => {
      const who = c.count === 1 ? c.first : c.count === 2 ? `${c.first} (and 1 other pod)` : `${c.first} (and ${c.count - 1} other pods)`;
      return `${who}: ${reason}`;
    }).sort();
    for (const l of lines) addWarning(a, l);
  }
}

function addWarning(a: AdmissionAttributes, w: string): void {
  // Validation may run again inside an update's retry loop: one warning per request.
  if (a.warnings && !a.warnings.includes(w)) a.warnings.push(w);
}

function qualified(a: AdmissionAttributes): string {
  return a.resource.group ? `${a.resource.resource}.${a.resource.group}` : a.resource.resource;
}

/** admission.NewForbidden's name: the object's name, else its generateName (names are generated later). */
export function objectName(a: AdmissionAttributes): string {
  return a.object?.metadata.name || a.object?.metadata.generateName || a.name;
}

/** isSignificantPodUpdate: only changes that could alter the verdict (images, seccomp annotations, containers) are re-checked. */
function isSignificantPodUpdate(pod: KubeObject, old: KubeObject): boolean {
  const ann = pod.metadata.annotations ?? {}; const oldAnn = old.metadata.annotations ?? {};
  if (ann['seccomp.security.alpha.kubernetes.io/pod'] !== oldAnn['seccomp.security.alpha.kubernetes.io/pod']) return true;
  const spec = (pod['spec'] ?? {}) as Obj; const oldSpec = (old['spec'] ?? {}) as Obj;
  const list = (s: Obj, k: string) => (Array.isArray(s[k]) ? s[k] as Obj[] : []);
  for (const k of ['containers', 'initContainers']) {
    const cs = list(spec, k); const ocs = list(oldSpec, k);
    if (cs.length !== ocs.length) return true;
    for (let i = 0; i < cs.length; i++) if (significantContainer(cs[i]!, ocs[i]!, ann, oldAnn)) return true;
  }
  const oldEph = list(oldSpec, 'ephemeralContainers');
  for (const c of list(spec, 'ephemeralContainers')) {
    const oc = oldEph.find((x) => x['name'] === c['name']);
    if (!oc || significantContainer(c, oc, ann, oldAnn)) return true;
  }
  return false;
}

function significantContainer(c: Obj, oc: Obj, ann: Record<string, string>, oldAnn: Record<string, string>): boolean {
  if (c['image'] !== oc['image']) return true;
  const key = `container.seccomp.security.alpha.kubernetes.io/${String(c['name'])}`;
  return ann[key] !== oldAnn[key];
}
