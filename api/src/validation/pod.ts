/**
 * PodSpec / PodTemplateSpec / Pod validation, as upstream's core validation ValidatePodSpec,
 * validateContainers, ValidateResourceRequirements, validateTolerations and ValidatePodUpdate.
 */
import { ERR_FORMAT_WRONG, canonicalQuantity, compareQuantities, isValidQuantity, parseQuantityExact } from '../quantity.js';
import { child, duplicate, forbidden, index as idx, invalid, key as keyPath, notFound, notSupported, required, type FieldError } from './field.js';
import { deepEqual, validateAnnotations, validateLabels } from './meta.js';
import { isDNS1123Label, isDNS1123Subdomain, isEnvVarName, isQualifiedName, isValidLabelValue, isValidPortName, isValidPortNum, isConfigMapKey } from './names.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map((x) => (isObj(x) ? x : {})) : []);

export const IS_NEGATIVE_ERROR_MSG = 'must be greater than or equal to 0';
export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;
export const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'] as const;
export const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
export const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const TAINT_EFFECTS = ['NoExecute', 'NoSchedule', 'PreferNoSchedule'];
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const VOLUME_SOURCES = ['hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc', 'azureFile', 'configMap', 'vsphereVolume',
  'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected', 'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral', 'image'];

/** ValidateNonnegativeField. */
export function validateNonnegative(v: unknown, path: string): FieldError[] {
  return typeof v === 'number' && v < 0 ? [invalid(path, v, IS_NEGATIVE_ERROR_MSG)] : [];
}

/** A quantity check: syntax, then ≥ 0; returns the canonical form when valid. */
function validateQuantity(v: unknown, path: string, errs: FieldError[]): string | undefined {
  if ((typeof v !== 'string' && typeof v !== 'number') || !isValidQuantity(v)) {
    errs.push(invalid(path, v, ERR_FORMAT_WRONG));
    return undefined;
  }
  const c = canonicalQuantity(v);
  if (parseQuantityExact(v).num < 0n) { errs.push(invalid(path, c, IS_NEGATIVE_ERROR_MSG)); return undefined; }
  return c;
}

export function validateContainerResourceName(name: string, path: string): FieldError[] {
  const msgs = isQualifiedName(name);
  if (msgs.length) return msgs.map((m) => invalid(path, name, m));
  if (STANDARD_CONTAINER_RESOURCES.has(name) || name.startsWith('hugepages-')) return [];
  // Extended resources need a domain that is not kubernetes.io.
  if (name.includes('/') && !name.startsWith('kubernetes.io/') && !name.startsWith('requests.')) return [];
  return [invalid(path, name, 'must be a standard resource for containers')];
}

/** ValidateResourceRequirements (container resources). */
export function validateResourceRequirements(res: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObj(res)) return errs;
  const limits: Obj = isObj(res.limits) ? res.limits : {};
  const requests: Obj = isObj(res.requests) ? res.requests : {};
  const limPath = child(path, 'limits'), reqPath = child(path, 'requests');
  const canonLimits: Record<string, string> = {};
  for (const [name, q] of Object.entries(limits)) {
    const p = keyPath(limPath, name);
    errs.push(...validateContainerResourceName(name, p));
    const c = validateQuantity(q, p, errs);
    if (c !== undefined) canonLimits[name] = c;
  }
  for (const [name, q] of Object.entries(requests)) {
    const p = keyPath(reqPath, name);
    errs.push(...validateContainerResourceName(name, p));
    const c = validateQuantity(q, p, errs);
    const lim = canonLimits[name];
    if (c === undefined || lim === undefined) continue;
    // Upstream reports this one on the requests map itself, not on the key.
    const overcommit = STANDARD_CONTAINER_RESOURCES.has(name);
    if (!overcommit && compareQuantities(c, lim) !== 0) errs.push(invalid(reqPath, c, `must be equal to ${name} limit of ${lim}`));
    else if (compareQuantities(c, lim) > 0) errs.push(invalid(reqPath, c, `must be less than or equal to ${name} limit of ${lim}`));
  }
  return errs;
}

function validateProbe(probe: unknown, path: string, kind: 'liveness' | 'readiness' | 'startup'): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObj(probe)) return errs;
  const handlers = ['exec', 'httpGet', 'tcpSocket', 'grpc'].filter((h) => probe[h] !== undefined);
  if (handlers.length === 0) errs.push(required(path, 'must specify a handler type'));
  for (const h of handlers.slice(1)) errs.push(forbidden(child(path, h), 'may not specify more than 1 handler type'));
  for (const f of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    errs.push(...validateNonnegative(probe[f], child(path, f)));
  }
  if (kind !== 'readiness' && probe.successThreshold !== undefined && probe.successThreshold !== 1) {
    errs.push(invalid(child(path, 'successThreshold'), probe.successThreshold, 'must be 1'));
  }
  if (isObj(probe.exec) && !(Array.isArray(probe.exec.command) && probe.exec.command.length)) errs.push(required(child(path, 'exec', 'command'), ''));
  if (isObj(probe.httpGet)) errs.push(...validatePortNumOrName(probe.httpGet.port, child(path, 'httpGet', 'port')));
  if (isObj(probe.tcpSocket)) errs.push(...validatePortNumOrName(probe.tcpSocket.port, child(path, 'tcpSocket', 'port')));
  if (isObj(probe.httpGet) && probe.httpGet.scheme !== undefined && !['HTTP', 'HTTPS'].includes(probe.httpGet.scheme)) {
    errs.push(notSupported(child(path, 'httpGet', 'scheme'), probe.httpGet.scheme, ['HTTP', 'HTTPS']));
  }
  return errs;
}

/** validateLifecycle: each hook names exactly one of exec, httpGet, tcpSocket, sleep. */
function validateLifecycle(lc: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObj(lc)) return errs;
  for (const hook of ['postStart', 'preStop']) {
    const h = lc[hook];
    if (!isObj(h)) continue;
    const p = child(path, hook);
    const handlers = ['exec', 'httpGet', 'tcpSocket', 'sleep'].filter((k) => h[k] !== undefined && h[k] !== null);
    if (handlers.length === 0) errs.push(required(p, 'must specify a handler type'));
    for (const k of handlers.slice(1)) errs.push(forbidden(child(p, k), 'may not specify more than 1 handler type'));
    if (isObj(h.exec) && !(Array.isArray(h.exec.command) && h.exec.command.length)) errs.push(required(child(p, 'exec', 'command'), ''));
    if (isObj(h.httpGet)) errs.push(...validatePortNumOrName(h.httpGet.port, child(p, 'httpGet', 'port')));
    if (isObj(h.tcpSocket)) errs.push(...validatePortNumOrName(h.tcpSocket.port, child(p, 'tcpSocket', 'port')));
  }
  return errs;
}

/** ValidatePortNumOrName: an int in 1..65535 or an IANA_SVC_NAME. */
export function validatePortNumOrName(port: unknown, path: string): FieldError[] {
  if (typeof port === 'number') return isValidPortNum(port).map((m) => invalid(path, port, m));
  if (typeof port === 'string') {
    if (port === '') return [required(path, '')];
    return isValidPortName(port).map((m) => invalid(path, port, m));
  }
  return [required(path, '')];
}

function validateContainerPorts(ports: unknown, path: string, hostNetwork: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  arr(ports).forEach((p, i) => {
    const ip = idx(path, i);
    if (p.name) {
      const msgs = isValidPortName(String(p.name));
      if (msgs.length) for (const m of msgs) errs.push(invalid(child(ip, 'name'), p.name, m));
      else if (names.has(p.name)) errs.push(duplicate(child(ip, 'name'), p.name));
      else names.add(p.name);
    }
    if (!p.containerPort) errs.push(required(child(ip, 'containerPort'), ''));
    else for (const m of isValidPortNum(p.containerPort)) errs.push(invalid(child(ip, 'containerPort'), p.containerPort, m));
    if (p.hostPort) for (const m of isValidPortNum(p.hostPort)) errs.push(invalid(child(ip, 'hostPort'), p.hostPort, m));
    if (hostNetwork && p.hostPort && p.containerPort && p.hostPort !== p.containerPort) {
      errs.push(invalid(child(ip, 'containerPort'), p.containerPort, 'must match `hostPort` when `hostNetwork` is true'));
    }
    if (!p.protocol) errs.push(required(child(ip, 'protocol'), ''));
    else if (!(PORT_PROTOCOLS as readonly string[]).includes(p.protocol)) errs.push(notSupported(child(ip, 'protocol'), p.protocol, PORT_PROTOCOLS));
  });
  return errs;
}

function validateEnv(env: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  arr(env).forEach((e, i) => {
    const ip = idx(path, i);
    if (!e.name) errs.push(required(child(ip, 'name'), ''));
    else for (const m of isEnvVarName(String(e.name))) errs.push(invalid(child(ip, 'name'), e.name, m));
    if (isObj(e.valueFrom)) {
      const srcs = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'].filter((k) => e.valueFrom[k] !== undefined);
      if (e.value !== undefined && e.value !== '' && srcs.length) errs.push(invalid(ip, '', 'may not have more than one field specified at a time'));
      if (srcs.length === 0) errs.push(invalid(child(ip, 'valueFrom'), '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
      for (const k of ['configMapKeyRef', 'secretKeyRef']) {
        const ref = e.valueFrom[k];
        if (!isObj(ref)) continue;
        if (!ref.key) errs.push(required(child(ip, 'valueFrom', k, 'key'), ''));
        else for (const m of isConfigMapKey(String(ref.key))) errs.push(invalid(child(ip, 'valueFrom', k, 'key'), ref.key, m));
      }
    }
  });
  return errs;
}

function validateVolumeMounts(mounts: unknown, path: string, volumes: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  arr(mounts).forEach((m, i) => {
    const ip = idx(path, i);
    if (!m.name) errs.push(required(child(ip, 'name'), ''));
    else if (!volumes.has(m.name)) errs.push(notFound(child(ip, 'name'), m.name));
    if (!m.mountPath) errs.push(required(child(ip, 'mountPath'), ''));
    else if (paths.has(m.mountPath)) errs.push(invalid(child(ip, 'mountPath'), m.mountPath, 'must be unique'));
    else paths.add(m.mountPath);
  });
  return errs;
}

function validateContainer(c: Obj, path: string, volumes: Set<string>, names: Set<string>, hostNetwork: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.name) errs.push(required(child(path, 'name'), ''));
  else {
    for (const m of isDNS1123Label(String(c.name))) errs.push(invalid(child(path, 'name'), c.name, m));
    if (names.has(c.name)) errs.push(duplicate(child(path, 'name'), c.name));
    names.add(c.name);
  }
  if (!c.image) errs.push(required(child(path, 'image'), ''));
  else if (typeof c.image === 'string' && c.image.trim() !== c.image) errs.push(invalid(child(path, 'image'), c.image, 'must not have leading or trailing whitespace'));
  if (c.imagePullPolicy === undefined || c.imagePullPolicy === '') errs.push(required(child(path, 'imagePullPolicy'), ''));
  else if (!(PULL_POLICIES as readonly string[]).includes(c.imagePullPolicy)) errs.push(notSupported(child(path, 'imagePullPolicy'), c.imagePullPolicy, PULL_POLICIES));
  if (c.terminationMessagePolicy !== undefined && !TERMINATION_MESSAGE_POLICIES.includes(c.terminationMessagePolicy)) {
    errs.push(notSupported(child(path, 'terminationMessagePolicy'), c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES));
  }
  errs.push(...validateContainerPorts(c.ports, child(path, 'ports'), hostNetwork));
  errs.push(...validateEnv(c.env, child(path, 'env')));
  errs.push(...validateVolumeMounts(c.volumeMounts, child(path, 'volumeMounts'), volumes));
  errs.push(...validateResourceRequirements(c.resources, child(path, 'resources')));
  errs.push(...validateProbe(c.livenessProbe, child(path, 'livenessProbe'), 'liveness'));
  errs.push(...validateProbe(c.readinessProbe, child(path, 'readinessProbe'), 'readiness'));
  errs.push(...validateProbe(c.startupProbe, child(path, 'startupProbe'), 'startup'));
  errs.push(...validateLifecycle(c.lifecycle, child(path, 'lifecycle')));
  return errs;
}

function validateVolumes(volumes: unknown, path: string): { errs: FieldError[]; names: Set<string> } {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  arr(volumes).forEach((v, i) => {
    const ip = idx(path, i);
    if (!v.name) errs.push(required(child(ip, 'name'), ''));
    else {
      for (const m of isDNS1123Label(String(v.name))) errs.push(invalid(child(ip, 'name'), v.name, m));
      if (names.has(v.name)) errs.push(duplicate(child(ip, 'name'), v.name));
      names.add(v.name);
    }
    const sources = VOLUME_SOURCES.filter((s) => v[s] !== undefined && v[s] !== null);
    if (sources.length === 0) errs.push(required(ip, 'must specify a volume type'));
    for (const s of sources.slice(1)) errs.push(forbidden(child(ip, s), 'may not specify more than 1 volume type'));
    if (isObj(v.hostPath) && !v.hostPath.path) errs.push(required(child(ip, 'hostPath', 'path'), ''));
    if (isObj(v.configMap) && !v.configMap.name) errs.push(required(child(ip, 'configMap', 'name'), ''));
    if (isObj(v.secret) && !v.secret.secretName) errs.push(required(child(ip, 'secret', 'secretName'), ''));
    if (isObj(v.persistentVolumeClaim) && !v.persistentVolumeClaim.claimName) errs.push(required(child(ip, 'persistentVolumeClaim', 'claimName'), ''));
    for (const s of ['configMap', 'secret']) {
      const mode = v[s]?.defaultMode;
      if (typeof mode === 'number' && (mode < 0 || mode > 0o777)) errs.push(invalid(child(ip, s, 'defaultMode'), mode, 'must be a number between 0 and 0777 (octal), both inclusive'));
    }
  });
  return { errs, names };
}

/** validateTolerations. */
export function validateTolerations(tolerations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  arr(tolerations).forEach((t, i) => {
    const ip = idx(path, i);
    if (t.key) for (const m of isQualifiedName(String(t.key))) errs.push(invalid(child(ip, 'key'), t.key, m));
    if (!t.key && t.operator !== 'Exists') {
      errs.push(invalid(child(ip, 'operator'), t.operator ?? '', 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute') {
      errs.push(invalid(child(ip, 'effect'), t.effect ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (t.operator ?? '') {
      case '': case 'Equal':
        for (const m of isValidLabelValue(String(t.value ?? ''))) errs.push(invalid(child(ip, 'operator'), t.value, m));
        break;
      case 'Exists':
        if (t.value) errs.push(invalid(child(ip, 'operator'), t.value, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(child(ip, 'operator'), t.operator, ['Equal', 'Exists']));
    }
    if (t.effect && !TAINT_EFFECTS.includes(t.effect)) errs.push(notSupported(child(ip, 'effect'), t.effect, TAINT_EFFECTS));
  });
  return errs;
}

/** ValidatePodSpec. Expects a defaulted spec (apiserver defaults before validating). */
export function validatePodSpec(spec: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const s: Obj = isObj(spec) ? spec : {};
  const vols = validateVolumes(s.volumes, child(path, 'volumes'));
  errs.push(...vols.errs);
  const hostNetwork = s.hostNetwork === true;
  const names = new Set<string>();
  const containers = arr(s.containers);
  if (containers.length === 0) errs.push(required(child(path, 'containers'), ''));
  arr(s.initContainers).forEach((c, i) => errs.push(...validateContainer(c, idx(child(path, 'initContainers'), i), vols.names, names, hostNetwork)));
  containers.forEach((c, i) => errs.push(...validateContainer(c, idx(child(path, 'containers'), i), vols.names, names, hostNetwork)));
  if (!s.restartPolicy) errs.push(required(child(path, 'restartPolicy'), ''));
  else if (!(RESTART_POLICIES as readonly string[]).includes(s.restartPolicy)) errs.push(notSupported(child(path, 'restartPolicy'), s.restartPolicy, RESTART_POLICIES));
  if (!s.dnsPolicy) errs.push(required(child(path, 'dnsPolicy'), ''));
  else if (!(DNS_POLICIES as readonly string[]).includes(s.dnsPolicy)) errs.push(notSupported(child(path, 'dnsPolicy'), s.dnsPolicy, DNS_POLICIES));
  if (s.dnsPolicy === 'None' && !isObj(s.dnsConfig)) errs.push(required(child(path, 'dnsConfig'), "must provide `dnsConfig` when `dnsPolicy` is None"));
  errs.push(...validateLabels(s.nodeSelector, child(path, 'nodeSelector')));
  for (const f of ['serviceAccountName', 'nodeName', 'schedulerName', 'priorityClassName']) {
    if (s[f]) for (const m of isDNS1123Subdomain(String(s[f]))) errs.push(invalid(child(path, f), s[f], m));
  }
  for (const f of ['hostname', 'subdomain']) {
    if (s[f]) for (const m of isDNS1123Label(String(s[f]))) errs.push(invalid(child(path, f), s[f], m));
  }
  if (s.activeDeadlineSeconds !== undefined && s.activeDeadlineSeconds !== null && (s.activeDeadlineSeconds < 1 || s.activeDeadlineSeconds > 2147483647)) {
    errs.push(invalid(child(path, 'activeDeadlineSeconds'), s.activeDeadlineSeconds, 'must be between 1 and 2147483647, inclusive'));
  }
  errs.push(...validateNonnegative(s.terminationGracePeriodSeconds === -1 ? 0 : s.terminationGracePeriodSeconds, child(path, 'terminationGracePeriodSeconds')));
  errs.push(...validateTolerations(s.tolerations, child(path, 'tolerations')));
  return errs;
}

/** ValidatePodTemplateSpec: template metadata (labels, annotations) + spec. */
export function validatePodTemplateSpec(t: unknown, path: string): FieldError[] {
  const tpl: Obj = isObj(t) ? t : {};
  const meta: Obj = isObj(tpl.metadata) ? tpl.metadata : {};
  return [
    ...validateLabels(meta.labels, child(path, 'metadata', 'labels')),
    ...validateAnnotations(meta.annotations, child(path, 'metadata', 'annotations')),
    ...validatePodSpec(tpl.spec, child(path, 'spec')),
  ];
}

export const POD_UPDATE_FORBIDDEN_MSG = 'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** Lists the paths at which two JSON values differ (for the update diff text). */
function diffPaths(a: unknown, b: unknown, path: string, out: string[]): void {
  if (deepEqual(a, b)) return;
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diffPaths(a[k], b[k], child(path, k), out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((x, i) => diffPaths(x, b[i], idx(path, i), out));
    return;
  }
  out.push(path);
}

/**
 * ValidatePodUpdate: only images, activeDeadlineSeconds (set or lowered), tolerations (additions)
 * and terminationGracePeriodSeconds (negative → 1) may change; anything else is one Forbidden on
 * `spec` with upstream's message and a list of the changed fields.
 */
export function validatePodUpdate(next: unknown, prev: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const n: Obj = isObj((next as Obj)?.spec) ? (next as Obj).spec : {};
  const o: Obj = isObj((prev as Obj)?.spec) ? (prev as Obj).spec : {};
  const munged: Obj = structuredClone(n);
  for (const list of ['containers', 'initContainers']) {
    const nl = arr(munged[list]), ol = arr(o[list]);
    if (nl.length === ol.length) nl.forEach((c, i) => { c.image = ol[i]!.image; });
  }
  // activeDeadlineSeconds may be set, or lowered, but not removed or raised.
  const oad = o.activeDeadlineSeconds, nad = n.activeDeadlineSeconds;
  if (oad !== undefined && oad !== null) {
    if (nad === undefined || nad === null) errs.push(invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
    else if (nad > oad) errs.push(invalid('spec.activeDeadlineSeconds', nad, 'must be less than or equal to previous value'));
  }
  munged.activeDeadlineSeconds = o.activeDeadlineSeconds;
  if (typeof o.terminationGracePeriodSeconds === 'number' && o.terminationGracePeriodSeconds < 0 && n.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = o.terminationGracePeriodSeconds;
  }
  // Tolerations: every old one must still be present; new ones may be added.
  const ot = arr(o.tolerations), nt = arr(n.tolerations);
  const tolerationsOk = ot.every((t) => nt.some((x) => deepEqual(x, t)
    || (x.key === t.key && x.operator === t.operator && x.value === t.value && x.effect === t.effect
      && typeof t.tolerationSeconds === 'number' && typeof x.tolerationSeconds === 'number' && x.tolerationSeconds <= t.tolerationSeconds)));
  if (tolerationsOk) munged.tolerations = o.tolerations;
  else errs.push(forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'));
  for (const k of Object.keys(munged)) if (munged[k] === undefined) delete munged[k];
  if (!deepEqual(munged, o)) {
    const changed: string[] = [];
    diffPaths(o, munged, 'spec', changed);
    errs.push(forbidden('spec', `${POD_UPDATE_FORBIDDEN_MSG}\n  changed: ${changed.join(', ')}`));
  }
  return errs;
}
