/**
 * Validation of the core/v1 kinds other than Pod: Service, Namespace, Node, Secret, ConfigMap,
 * Event, Endpoints, ServiceAccount. Mirrors upstream's pkg/apis/core/validation.
 */
import { isIP } from 'node:net';
import { child, duplicate, forbidden, GoRepr, goQuote, index as idx, invalid, key as keyPath, notSupported, required, tooLong, type FieldError } from './field.js';
import { deepEqual, validateImmutableField, validateLabels } from './meta.js';
import { isConfigMapKey, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidPortNum } from './names.js';
import { PORT_PROTOCOLS, validatePortNumOrName } from './pod.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map((x) => (isObj(x) ? x : {})) : []);

export const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] as const;
export const MAX_SECRET_SIZE = 1024 * 1024;
export const DEFAULT_NODE_PORT_RANGE = { base: 30000, size: 2768 } as const;
const IP_MSG = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

export interface ServiceValidationOptions {
  /** The apiserver's --service-node-port-range. @default 30000-32767 */
  nodePortRange?: { base: number; size: number };
}

/** Go's %#v of the (protocol, port) key upstream reports duplicate service ports with. */
const servicePortKey = (p: Obj) => new GoRepr(`core.ServicePort{Name:"", Protocol:${goQuote(String(p.protocol ?? ''))}, AppProtocol:(*string)(nil), Port:${Number(p.port ?? 0)}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`);

/** ValidateService (plus the node-port range check the allocator does on create). */
export function validateServiceSpec(svc: unknown, opts: ServiceValidationOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isObj((svc as Obj)?.spec) ? (svc as Obj).spec : {};
  const type = spec.type ?? 'ClusterIP';
  const ports = arr(spec.ports);
  if (!(SERVICE_TYPES as readonly string[]).includes(type)) errs.push(notSupported('spec.type', type, SERVICE_TYPES));
  if (type === 'ExternalName') {
    if (!spec.externalName) errs.push(required('spec.externalName', ''));
    else for (const m of isDNS1123Subdomain(String(spec.externalName).replace(/\.$/, ''))) errs.push(invalid('spec.externalName', spec.externalName, m));
    if (spec.clusterIP && spec.clusterIP !== 'None') errs.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
  } else if (ports.length === 0 && spec.clusterIP !== 'None') {
    errs.push(required('spec.ports', ''));
  }
  const names = new Set<string>();
  const seen = new Set<string>();
  const nodePorts = new Set<string>();
  const range = opts.nodePortRange ?? DEFAULT_NODE_PORT_RANGE;
  ports.forEach((p, i) => {
    const pp = idx('spec.ports', i);
    if (ports.length > 1 && !p.name) errs.push(required(child(pp, 'name'), ''));
    else if (p.name) {
      const msgs = isDNS1123Label(String(p.name));
      if (msgs.length) for (const m of msgs) errs.push(invalid(child(pp, 'name'), p.name, m));
      else if (names.has(p.name)) errs.push(duplicate(child(pp, 'name'), p.name));
      else names.add(p.name);
    }
    for (const m of isValidPortNum(p.port)) errs.push(invalid(child(pp, 'port'), p.port ?? 0, m));
    if (!p.protocol) errs.push(required(child(pp, 'protocol'), ''));
    else if (!(PORT_PROTOCOLS as readonly string[]).includes(p.protocol)) errs.push(notSupported(child(pp, 'protocol'), p.protocol, PORT_PROTOCOLS));
    if (p.targetPort !== undefined) errs.push(...validatePortNumOrName(p.targetPort, child(pp, 'targetPort')));
    const k = `${p.protocol}/${p.port}`;
    if (seen.has(k)) errs.push(duplicate(pp, servicePortKey(p)));
    seen.add(k);
    if (p.nodePort) {
      if (type === 'ClusterIP') errs.push(forbidden(child(pp, 'nodePort'), "may not be used when `type` is 'ClusterIP'"));
      else if (type === 'ExternalName') errs.push(forbidden(child(pp, 'nodePort'), "may not be used when `type` is 'ExternalName'"));
      else if (p.nodePort < range.base || p.nodePort >= range.base + range.size) {
        errs.push(invalid(child(pp, 'nodePort'), p.nodePort, `provided port is not in the valid range. The range of valid ports is ${range.base}-${range.base + range.size - 1}`));
      }
      const nk = `${p.protocol}/${p.nodePort}`;
      if (nodePorts.has(nk)) errs.push(duplicate(child(pp, 'nodePort'), p.nodePort));
      nodePorts.add(nk);
    }
  });
  if (spec.clusterIP && spec.clusterIP !== 'None' && !isIP(spec.clusterIP)) errs.push(invalid('spec.clusterIPs[0]', spec.clusterIP, IP_MSG));
  (Array.isArray(spec.clusterIPs) ? spec.clusterIPs : []).forEach((ip: unknown, i: number) => {
    if (ip !== 'None' && !isIP(String(ip))) errs.push(invalid(idx('spec.clusterIPs', i), ip, IP_MSG));
  });
  if (spec.sessionAffinity !== undefined && !['ClientIP', 'None'].includes(spec.sessionAffinity)) {
    errs.push(notSupported('spec.sessionAffinity', spec.sessionAffinity, ['ClientIP', 'None']));
  }
  if (spec.externalTrafficPolicy) {
    if (type !== 'NodePort' && type !== 'LoadBalancer' && !(Array.isArray(spec.externalIPs) && spec.externalIPs.length)) {
      errs.push(invalid('spec.externalTrafficPolicy', spec.externalTrafficPolicy, 'may only be set for externally-accessible services'));
    }
    else if (!['Cluster', 'Local'].includes(spec.externalTrafficPolicy)) errs.push(notSupported('spec.externalTrafficPolicy', spec.externalTrafficPolicy, ['Cluster', 'Local']));
  }
  if (spec.internalTrafficPolicy && !['Cluster', 'Local'].includes(spec.internalTrafficPolicy)) {
    errs.push(notSupported('spec.internalTrafficPolicy', spec.internalTrafficPolicy, ['Cluster', 'Local']));
  }
  if (spec.ipFamilyPolicy && !['SingleStack', 'PreferDualStack', 'RequireDualStack'].includes(spec.ipFamilyPolicy)) {
    errs.push(notSupported('spec.ipFamilyPolicy', spec.ipFamilyPolicy, ['SingleStack', 'PreferDualStack', 'RequireDualStack']));
  }
  errs.push(...validateLabels(spec.selector, 'spec.selector'));
  return errs;
}

/** ValidateServiceUpdate: assigned clusterIPs may not change (unless the type leaves/enters ExternalName or both are headless). */
export function validateServiceUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = isObj((next as Obj)?.spec) ? (next as Obj).spec : {};
  const o: Obj = isObj((prev as Obj)?.spec) ? (prev as Obj).spec : {};
  if (n.type === 'ExternalName' || o.type === 'ExternalName') return [];
  const ips = (spec: Obj): string[] => (Array.isArray(spec.clusterIPs) && spec.clusterIPs.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : []);
  const ni = ips(n), oi = ips(o);
  if (ni[0] === 'None' && oi[0] === 'None') return [];
  const errs: FieldError[] = [];
  const at = (i: number) => idx('spec.clusterIPs', i);
  if (ni.length === oi.length) {
    oi.forEach((ip, i) => { if (ip !== ni[i]) errs.push(invalid(at(i), ni, 'may not change once set')); });
  } else if (oi.length > ni.length) {
    if (ni.length === 0) errs.push(invalid(at(0), ni, 'primary clusterIP can not be unset'));
    else if (ni[0] !== oi[0]) errs.push(invalid(at(0), ni, 'may not change once set'));
  } else if (oi.length > 0 && ni[0] !== oi[0]) {
    errs.push(invalid(at(0), ni, 'may not change once set'));
  }
  return errs;
}

/** ValidateNamespace: finalizers are qualified names ('kubernetes' is the standard one). */
export function validateNamespaceSpec(ns: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const fin = (ns as Obj)?.spec?.finalizers;
  (Array.isArray(fin) ? fin : []).forEach((f: unknown) => {
    const s = String(f);
    if (s === 'kubernetes') return;
    const msgs = isQualifiedName(s);
    if (msgs.length) for (const m of msgs) errs.push(invalid('spec.finalizers', f, m));
    else if (!s.includes('/')) errs.push(invalid('spec.finalizers', f, 'name is neither a standard finalizer name nor is it fully qualified'));
  });
  return errs;
}

/** ValidateNode: podCIDR(s), taints. */
export function validateNodeSpec(node: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isObj((node as Obj)?.spec) ? (node as Obj).spec : {};
  const cidrs: unknown[] = Array.isArray(spec.podCIDRs) ? spec.podCIDRs : spec.podCIDR ? [spec.podCIDR] : [];
  cidrs.forEach((c, i) => {
    const [ip, bits] = String(c).split('/');
    if (!ip || !isIP(ip) || bits === undefined || !/^\d+$/.test(bits) || Number(bits) > (isIP(ip) === 4 ? 32 : 128)) {
      errs.push(invalid(idx('spec.podCIDRs', i), c, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'));
    }
  });
  const seen = new Set<string>();
  arr(spec.taints).forEach((t, i) => {
    const p = idx('spec.taints', i);
    for (const m of isQualifiedName(String(t.key ?? ''))) errs.push(invalid(child(p, 'key'), t.key ?? '', m));
    if (!t.effect) errs.push(required(child(p, 'effect'), ''));
    else if (!['NoExecute', 'NoSchedule', 'PreferNoSchedule'].includes(t.effect)) errs.push(notSupported(child(p, 'effect'), t.effect, ['NoExecute', 'NoSchedule', 'PreferNoSchedule']));
    const k = `${t.key}:${t.effect}`;
    if (seen.has(k)) errs.push(duplicate(p, new GoRepr(`core.Taint{Key:${goQuote(String(t.key))}, Value:${goQuote(String(t.value ?? ''))}, Effect:${goQuote(String(t.effect))}, TimeAdded:<nil>}`)));
    seen.add(k);
  });
  return errs;
}

/** ValidateNodeUpdate: podCIDRs may only go from unset to set. */
export function validateNodeUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = isObj((next as Obj)?.spec) ? (next as Obj).spec : {};
  const o: Obj = isObj((prev as Obj)?.spec) ? (prev as Obj).spec : {};
  const oc = o.podCIDRs ?? (o.podCIDR ? [o.podCIDR] : []);
  const nc = n.podCIDRs ?? (n.podCIDR ? [n.podCIDR] : []);
  if (oc.length > 0 && !deepEqual(oc, nc)) return [forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid')];
  return [];
}

function base64Size(v: unknown): number {
  if (typeof v !== 'string') return 0;
  const pad = v.endsWith('==') ? 2 : v.endsWith('=') ? 1 : 0;
  return Math.floor((v.length * 3) / 4) - pad;
}

function validateDataKeys(data: unknown, path: string, errs: FieldError[]): number {
  let size = 0;
  if (!isObj(data)) return size;
  for (const [k, v] of Object.entries(data)) {
    for (const m of isConfigMapKey(k)) errs.push(invalid(path, k, m));
    // data values are base64 on the wire; stringData values are plain text.
    size += path === 'stringData' ? Buffer.byteLength(String(v)) : base64Size(v);
  }
  return size;
}

/** ValidateSecret: keys, total size, and the keys each well-known type requires. */
export function validateSecretData(secret: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const s: Obj = isObj(secret) ? secret : {};
  let size = validateDataKeys(s.data, 'data', errs);
  size += validateDataKeys(s.stringData, 'stringData', errs);
  if (size > MAX_SECRET_SIZE) errs.push(tooLong('data', '', MAX_SECRET_SIZE));
  const has = (k: string) => (isObj(s.data) && k in s.data) || (isObj(s.stringData) && k in s.stringData);
  switch (s.type) {
    case 'kubernetes.io/tls':
      for (const k of ['tls.crt', 'tls.key']) if (!has(k)) errs.push(required(keyPath('data', k), ''));
      break;
    case 'kubernetes.io/dockerconfigjson':
      if (!has('.dockerconfigjson')) errs.push(required(keyPath('data', '.dockerconfigjson'), ''));
      break;
    case 'kubernetes.io/dockercfg':
      if (!has('.dockercfg')) errs.push(required(keyPath('data', '.dockercfg'), ''));
      break;
    case 'kubernetes.io/ssh-auth':
      if (!has('ssh-privatekey')) errs.push(required(keyPath('data', 'ssh-privatekey'), ''));
      break;
    case 'kubernetes.io/basic-auth':
      if (!has('username') && !has('password')) errs.push(required('data', 'must have at least one of username or password'));
      break;
    case 'kubernetes.io/service-account-token':
      if (!s.metadata?.annotations?.['kubernetes.io/service-account.name']) {
        errs.push(required(keyPath('metadata.annotations', 'kubernetes.io/service-account.name'), ''));
      }
      break;
    default:
  }
  return errs;
}

/** ValidateSecretUpdate: type is fixed; an immutable secret keeps its data and stays immutable. */
export function validateSecretUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = isObj(next) ? next : {}, o: Obj = isObj(prev) ? prev : {};
  const errs = validateImmutableField(n.type ?? '', o.type ?? '', 'type');
  if (o.immutable === true) {
    if (n.immutable !== true) errs.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
    if (!deepEqual(n.data ?? {}, o.data ?? {}) || (n.stringData && Object.keys(n.stringData).length)) errs.push(forbidden('data', 'field is immutable when `immutable` is set'));
  }
  return errs;
}

/** ValidateConfigMap: keys (also unique across data and binaryData) and total size. */
export function validateConfigMapData(cm: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const c: Obj = isObj(cm) ? cm : {};
  let size = 0;
  if (isObj(c.data)) for (const [k, v] of Object.entries(c.data)) {
    for (const m of isConfigMapKey(k)) errs.push(invalid('data', k, m));
    size += Buffer.byteLength(String(v));
  }
  if (isObj(c.binaryData)) for (const [k, v] of Object.entries(c.binaryData)) {
    for (const m of isConfigMapKey(k)) errs.push(invalid('binaryData', k, m));
    if (isObj(c.data) && k in c.data) errs.push(invalid('binaryData', k, 'duplicate of key present in data'));
    size += base64Size(v);
  }
  if (size > MAX_SECRET_SIZE) errs.push(tooLong('', '', MAX_SECRET_SIZE));
  return errs;
}

/** ValidateConfigMapUpdate. */
export function validateConfigMapUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = isObj(next) ? next : {}, o: Obj = isObj(prev) ? prev : {};
  const errs: FieldError[] = [];
  if (o.immutable === true) {
    if (n.immutable !== true) errs.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
    if (!deepEqual(n.data ?? {}, o.data ?? {})) errs.push(forbidden('data', 'field is immutable when `immutable` is set'));
    if (!deepEqual(n.binaryData ?? {}, o.binaryData ?? {})) errs.push(forbidden('binaryData', 'field is immutable when `immutable` is set'));
  }
  return errs;
}

/** ValidateEvent (core/v1): the involved object's namespace must match the event's. */
export function validateEventFields(ev: unknown): FieldError[] {
  const e: Obj = isObj(ev) ? ev : {};
  const errs: FieldError[] = [];
  const ns = e.metadata?.namespace ?? '';
  const ions = e.involvedObject?.namespace ?? '';
  if (ions && ns && ions !== ns) errs.push(invalid('involvedObject.namespace', ions, 'does not match event.namespace'));
  if (typeof e.count === 'number' && e.count < 0) errs.push(invalid('count', e.count, 'must be greater than or equal to 0'));
  return errs;
}

/** ValidateEndpoints: addresses are IPs; ports valid and named when several. */
export function validateEndpointsSubsets(ep: unknown): FieldError[] {
  const errs: FieldError[] = [];
  arr((ep as Obj)?.subsets).forEach((ss, i) => {
    const p = idx('subsets', i);
    for (const list of ['addresses', 'notReadyAddresses']) {
      arr(ss[list]).forEach((a, j) => {
        if (!isIP(String(a.ip ?? ''))) errs.push(invalid(child(idx(child(p, list), j), 'ip'), a.ip ?? '', 'must be a valid IP address'));
      });
    }
    const ports = arr(ss.ports);
    ports.forEach((pt, j) => {
      const pp = idx(child(p, 'ports'), j);
      if (ports.length > 1 && !pt.name) errs.push(required(child(pp, 'name'), ''));
      else if (pt.name) for (const m of isDNS1123Label(String(pt.name))) errs.push(invalid(child(pp, 'name'), pt.name, m));
      for (const m of isValidPortNum(pt.port)) errs.push(invalid(child(pp, 'port'), pt.port ?? 0, m));
      if (!pt.protocol) errs.push(required(child(pp, 'protocol'), ''));
      else if (!(PORT_PROTOCOLS as readonly string[]).includes(pt.protocol)) errs.push(notSupported(child(pp, 'protocol'), pt.protocol, PORT_PROTOCOLS));
    });
  });
  return errs;
}

/** EndpointSlice validation (discovery/v1). */
export function validateEndpointSliceFields(es: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const e: Obj = isObj(es) ? es : {};
  const types = ['FQDN', 'IPv4', 'IPv6'];
  if (!e.addressType) errs.push(required('addressType', ''));
  else if (!types.includes(e.addressType)) errs.push(notSupported('addressType', e.addressType, types));
  arr(e.endpoints).forEach((ep, i) => {
    const p = child(idx('endpoints', i), 'addresses');
    const addrs: unknown[] = Array.isArray(ep.addresses) ? ep.addresses : [];
    if (addrs.length === 0) errs.push(required(p, 'must contain at least 1 address'));
    else if (addrs.length > 100) errs.push(invalid(p, addrs.length, 'must have at most 100 items'));
    addrs.forEach((a, j) => {
      const s = String(a);
      if (e.addressType === 'IPv4' && isIP(s) !== 4) errs.push(invalid(idx(p, j), a, 'must be a valid IPv4 address'));
      if (e.addressType === 'IPv6' && isIP(s) !== 6) errs.push(invalid(idx(p, j), a, 'must be a valid IPv6 address'));
      if (e.addressType === 'FQDN') for (const m of isDNS1123Subdomain(s)) errs.push(invalid(idx(p, j), a, m));
    });
  });
  const names = new Set<string>();
  arr(e.ports).forEach((pt, i) => {
    const pp = idx('ports', i);
    const name = pt.name ?? '';
    if (name) for (const m of isDNS1123Label(name)) errs.push(invalid(child(pp, 'name'), name, m));
    if (names.has(name)) errs.push(duplicate(child(pp, 'name'), name));
    names.add(name);
    if (pt.port !== undefined && pt.port !== null) for (const m of isValidPortNum(pt.port)) errs.push(invalid(child(pp, 'port'), pt.port, m));
    if (!pt.protocol) errs.push(required(child(pp, 'protocol'), ''));
    else if (!(PORT_PROTOCOLS as readonly string[]).includes(pt.protocol)) errs.push(notSupported(child(pp, 'protocol'), pt.protocol, PORT_PROTOCOLS));
  });
  return errs;
}
