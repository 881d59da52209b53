/**
 * The Pod Security Standards as checks (upstream k8s.io/pod-security-admission/policy): each check
 * looks at a pod's metadata and spec and answers allowed, or a reason and a detail in upstream's
 * words. evaluatePod runs the checks of a level in upstream's order (baseline checks, then the
 * restricted ones; baseline checks a restricted check covers run at baseline only) so the
 * aggregated message reads as the real apiserver's.
 *
 * Only the latest version of each check is modelled: a `-version` label is reported back as given
 * but evaluated as latest.
 */

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';
export const POD_SECURITY_LEVELS: readonly PodSecurityLevel[] = ['privileged', 'baseline', 'restricted'];

/** One check's verdict (policy.CheckResult). */
export interface CheckResult { allowed: boolean; forbiddenReason?: string; forbiddenDetail?: string }

export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** A baseline check fully covered by a restricted one: evaluated at baseline only. */
  overlap?: boolean;
  check(meta: Obj, spec: Obj): CheckResult;
}

const ALLOWED: CheckResult = { allowed: true };
const deny = (forbiddenReason: string, forbiddenDetail?: string): CheckResult =>
  ({ allowed: false, forbiddenReason, ...(forbiddenDetail !== undefined ? { forbiddenDetail } : {}) });

export const pluralize = (singular: string, plural: string, n: number) => (n === 1 ? singular : plural);
/** `"a", "b"` (Go %q each, joined). */
export const joinQuote = (items: readonly string[]) => items.map((s) => JSON.stringify(s)).join(', ');
const sortedUnique = (items: Iterable<string>) => [...new Set(items)].sort();
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

/** Containers, init containers and ephemeral containers (visitContainers). */
function containers(spec: Obj): Obj[] {
  return [...arr(spec['initContainers']), ...arr(spec['containers']), ...arr(spec['ephemeralContainers'])];
}
const sc = (c: Obj): Obj | undefined => (c['securityContext'] && typeof c['securityContext'] === 'object' ? c['securityContext'] as Obj : undefined);
const podSC = (spec: Obj): Obj | undefined => sc(spec);
const names = (cs: Obj[]) => cs.map((c) => String(c['name'] ?? ''));
const containersPhrase = (list: string[]) => `${pluralize('container', 'containers', list.length)} ${joinQuote(list)}`;

const privileged: Check = {
  id: 'privileged', level: 'baseline',
  check: (_m, spec) => {
    const bad = names(containers(spec).filter((c) => sc(c)?.['privileged'] === true));
    return bad.length ? deny('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`) : ALLOWED;
  },
};

const hostNamespaces: Check = {
  id: 'hostNamespaces', level: 'baseline',
  check: (_m, spec) => {
    const bad: string[] = [];
    if (spec['hostNetwork'] === true) bad.push('hostNetwork=true');
    if (spec['hostPID'] === true) bad.push('hostPID=true');
    if (spec['hostIPC'] === true) bad.push('hostIPC=true');
    return bad.length ? deny('host namespaces', bad.join(', ')) : ALLOWED;
  },
};

const hostPorts: Check = {
  id: 'hostPorts', level: 'baseline',
  check: (_m, spec) => {
    const bad: string[] = []; const ports = new Set<string>();
    for (const c of containers(spec)) {
      let ok = true;
      for (const p of arr(c['ports'])) if (p['hostPort'] && p['hostPort'] !== 0) { ok = false; ports.add(String(p['hostPort'])); }
      if (!ok) bad.push(String(c['name'] ?? ''));
    }
    const list = sortedUnique(ports);
    return bad.length ? deny('hostPort', `${containersPhrase(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', list.length)} ${list.join(', ')}`) : ALLOWED;
  },
};

const hostPathVolumes: Check = {
  id: 'hostPathVolumes', level: 'baseline', overlap: true,
  check: (_m, spec) => {
    const bad = arr(spec['volumes']).filter((v) => v['hostPath'] != null).map((v) => String(v['name'] ?? ''));
    return bad.length ? deny('hostPath volumes', `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}`) : ALLOWED;
  },
};

const CAPABILITIES_ALLOWED = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE',
  'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

const capabilitiesBaseline: Check = {
  id: 'capabilities_baseline', level: 'baseline', overlap: true,
  check: (_m, spec) => {
    const bad: string[] = []; const caps = new Set<string>();
    for (const c of containers(spec)) {
      let ok = true;
      for (const cap of arr(sc(c)?.['capabilities']?.['add']) as unknown as string[]) if (!CAPABILITIES_ALLOWED.has(cap)) { ok = false; caps.add(cap); }
      if (!ok) bad.push(String(c['name'] ?? ''));
    }
    return bad.length ? deny('non-default capabilities', `${containersPhrase(bad)} must not include ${joinQuote(sortedUnique(caps))} in securityContext.capabilities.add`) : ALLOWED;
  },
};

const PROC_MOUNT_ALLOWED = new Set(['', 'Default']);
const procMount: Check = {
  id: 'procMount', level: 'baseline',
  check: (_m, spec) => {
    const bad: string[] = []; const values = new Set<string>();
    for (const c of containers(spec)) {
      const v = sc(c)?.['procMount'];
      if (typeof v === 'string' && !PROC_MOUNT_ALLOWED.has(v)) { bad.push(String(c['name'] ?? '')); values.add(v); }
    }
    return bad.length ? deny('procMount', `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedUnique(values))}`) : ALLOWED;
  },
};

const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);
const seLinuxOptions: Check = {
  id: 'seLinuxOptions', level: 'baseline',
  check: (_m, spec) => {
    const badSetters: string[] = []; const badTypes = new Set<string>(); let setUser = false; let setRole = false;
    const valid = (o: Obj) => {
      let ok = true;
      const t = typeof o['type'] === 'string' ? o['type'] as string : '';
      if (!SELINUX_TYPES.has(t)) { ok = false; badTypes.add(t); }
      if (o['user']) { ok = false; setUser = true; }
      if (o['role']) { ok = false; setRole = true; }
      return ok;
    };
    const p = podSC(spec)?.['seLinuxOptions'];
    if (p && typeof p === 'object' && !valid(p as Obj)) badSetters.push('pod');
    const bad = names(containers(spec).filter((c) => { const o = sc(c)?.['seLinuxOptions']; return o && typeof o === 'object' && !valid(o as Obj); }));
    if (bad.length) badSetters.push(containersPhrase(bad));
    if (!badSetters.length) return ALLOWED;
    const data: string[] = [];
    if (badTypes.size) data.push(`${pluralize('type', 'types', badTypes.size)} ${joinQuote(sortedUnique(badTypes))}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return deny('seLinuxOptions', `${badSetters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`);
  },
};

const validSeccomp = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';
const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

const seccompBaseline: Check = {
  id: 'seccompProfile_baseline', level: 'baseline', overlap: true,
  check: (_m, spec) => {
    const badSetters: string[] = []; const values = new Set<string>();
    const p = podSC(spec)?.['seccompProfile'];
    if (p && typeof p === 'object' && !validSeccomp((p as Obj)['type'])) { badSetters.push('pod'); values.add(String((p as Obj)['type'] ?? '')); }
    const bad: string[] = [];
    for (const c of containers(spec)) {
      const cp = sc(c)?.['seccompProfile'];
      if (cp && typeof cp === 'object' && !validSeccomp((cp as Obj)['type'])) { bad.push(String(c['name'] ?? '')); values.add(String((cp as Obj)['type'] ?? '')); }
    }
    if (bad.length) badSetters.push(containersPhrase(bad));
    return badSetters.length ? deny('seccompProfile', `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedUnique(values))}`) : ALLOWED;
  },
};

const SYSCTLS_ALLOWED = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes', 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']);
const sysctls: Check = {
  id: 'sysctls', level: 'baseline',
  check: (_m, spec) => {
    const bad = arr(podSC(spec)?.['sysctls']).map((s) => String(s['name'] ?? '')).filter((n) => !SYSCTLS_ALLOWED.has(n));
    return bad.length ? deny('forbidden sysctls', bad.join(', ')) : ALLOWED;
  },
};

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const appArmorProfile: Check = {
  id: 'appArmorProfile', level: 'baseline',
  check: (meta, spec) => {
    const bad: string[] = [];
    const validType = (t: unknown) => t === undefined || t === 'RuntimeDefault' || t === 'Localhost';
    const p = podSC(spec)?.['appArmorProfile'];
    if (p && typeof p === 'object' && !validType((p as Obj)['type'])) bad.push(`pod must not set securityContext.appArmorProfile.type to ${JSON.stringify(String((p as Obj)['type']))}`);
    const badContainers: string[] = []; const badTypes = new Set<string>();
    for (const c of containers(spec)) {
      const cp = sc(c)?.['appArmorProfile'];
      if (cp && typeof cp === 'object' && !validType((cp as Obj)['type'])) { badContainers.push(String(c['name'] ?? '')); badTypes.add(String((cp as Obj)['type'])); }
    }
    if (badContainers.length) bad.push(`${containersPhrase(badContainers)} must not set securityContext.appArmorProfile.type to ${joinQuote(sortedUnique(badTypes))}`);
    const annotations = (meta['annotations'] ?? {}) as Record<string, string>;
    const forbidden: string[] = [];
    for (const [k, v] of Object.entries(annotations)) {
      if (k.startsWith(APPARMOR_ANNOTATION_PREFIX) && v !== 'runtime/default' && !v.startsWith('localhost/')) forbidden.push(`${k}=${JSON.stringify(v)}`);
    }
    if (forbidden.length) bad.push(`${pluralize('annotation', 'annotations', forbidden.length)} ${forbidden.sort().join(', ')}`);
    return bad.length ? deny(pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', bad.length), bad.join('; ')) : ALLOWED;
  },
};

const hostProbesAndHostLifecycle: Check = {
  id: 'hostProbesAndHostLifecycle', level: 'baseline',
  check: (_m, spec) => {
    const bad: string[] = []; const hosts = new Set<string>();
    for (const c of containers(spec)) {
      let ok = true;
      const handlers = [c['livenessProbe'], c['readinessProbe'], c['startupProbe'], c['lifecycle']?.['postStart'], c['lifecycle']?.['preStop']];
      for (const h of handlers) {
        if (!h || typeof h !== 'object') continue;
        for (const kind of ['httpGet', 'tcpSocket']) {
          const host = (h as Obj)[kind]?.['host'];
          if (typeof host === 'string' && host !== '') { ok = false; hosts.add(host); }
        }
      }
      if (!ok) bad.push(String(c['name'] ?? ''));
    }
    const list = sortedUnique(hosts);
    return bad.length ? deny('probe or lifecycle host', `${containersPhrase(bad)} ${pluralize('uses', 'use', bad.length)} probe or lifecycle ${pluralize('host', 'hosts', list.length)} ${joinQuote(list)}`) : ALLOWED;
  },
};

const windowsHostProcess: Check = {
  id: 'windowsHostProcess', level: 'baseline',
  check: (_m, spec) => {
    const setters: string[] = [];
    if (podSC(spec)?.['windowsOptions']?.['hostProcess'] === true) setters.push('pod');
    const bad = names(containers(spec).filter((c) => sc(c)?.['windowsOptions']?.['hostProcess'] === true));
    if (bad.length) setters.push(containersPhrase(bad));
    return setters.length ? deny('hostProcess', `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`) : ALLOWED;
  },
};

// ---- restricted ----

const allowPrivilegeEscalation: Check = {
  id: 'allowPrivilegeEscalation', level: 'restricted',
  check: (_m, spec) => {
    const bad = names(containers(spec).filter((c) => sc(c)?.['allowPrivilegeEscalation'] !== false));
    return bad.length ? deny('allowPrivilegeEscalation != false', `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`) : ALLOWED;
  },
};

const capabilitiesRestricted: Check = {
  id: 'capabilities_restricted', level: 'restricted',
  check: (_m, spec) => {
    const missingDrop: string[] = []; const adding: string[] = []; const caps = new Set<string>();
    for (const c of containers(spec)) {
      const capabilities = sc(c)?.['capabilities'];
      if (!capabilities || typeof capabilities !== 'object') { missingDrop.push(String(c['name'] ?? '')); continue; }
      if (!(arr((capabilities as Obj)['drop']) as unknown as string[]).includes('ALL')) missingDrop.push(String(c['name'] ?? ''));
      let added = false;
      for (const cap of arr((capabilities as Obj)['add']) as unknown as string[]) if (cap !== 'NET_BIND_SERVICE') { added = true; caps.add(cap); }
      if (added) adding.push(String(c['name'] ?? ''));
    }
    const details: string[] = [];
    if (missingDrop.length) details.push(`${containersPhrase(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`);
    if (adding.length) details.push(`${containersPhrase(adding)} must not include ${joinQuote(sortedUnique(caps))} in securityContext.capabilities.add`);
    return details.length ? deny('unrestricted capabilities', details.join('; ')) : ALLOWED;
  },
};

const ALLOWED_RESTRICTED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret', 'image'];
const KNOWN_RESTRICTED_VOLUMES = ['hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume',
  'cinder', 'cephfs', 'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'portworxVolume', 'photonPersistentDisk', 'scaleIO', 'storageos'];
const restrictedVolumes: Check = {
  id: 'restrictedVolumes', level: 'restricted',
  check: (_m, spec) => {
    const bad: string[] = []; const types = new Set<string>();
    for (const v of arr(spec['volumes'])) {
      if (ALLOWED_RESTRICTED_VOLUMES.some((k) => v[k] != null)) continue;
      bad.push(String(v['name'] ?? ''));
      types.add(KNOWN_RESTRICTED_VOLUMES.find((k) => v[k] != null) ?? 'unknown');
    }
    const list = sortedUnique(types);
    return bad.length
      ? deny('restricted volume types', `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', list.length)} ${joinQuote(list)}`)
      : ALLOWED;
  },
};

const runAsNonRoot: Check = {
  id: 'runAsNonRoot', level: 'restricted',
  check: (_m, spec) => {
    const badSetters: string[] = [];
    let podNonRoot = false;
    const p = podSC(spec)?.['runAsNonRoot'];
    if (p === false) badSetters.push('pod'); else if (p === true) podNonRoot = true;
    const explicit: string[] = []; const implicit: string[] = [];
    for (const c of containers(spec)) {
      const v = sc(c)?.['runAsNonRoot'];
      if (v === true || v === false) { if (v === false) explicit.push(String(c['name'] ?? '')); } else if (!podNonRoot) implicit.push(String(c['name'] ?? ''));
    }
    if (explicit.length) badSetters.push(containersPhrase(explicit));
    if (badSetters.length) return deny('runAsNonRoot != true', `${badSetters.join(' and ')} must not set securityContext.runAsNonRoot=false`);
    if (implicit.length) return deny('runAsNonRoot != true', `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`);
    return ALLOWED;
  },
};

const runAsUser: Check = {
  id: 'runAsUser', level: 'restricted',
  check: (_m, spec) => {
    const setters: string[] = [];
    if (podSC(spec)?.['runAsUser'] === 0) setters.push('pod');
    const bad = names(containers(spec).filter((c) => sc(c)?.['runAsUser'] === 0));
    if (bad.length) setters.push(containersPhrase(bad));
    return setters.length ? deny('runAsUser=0', `${setters.join(' and ')} must not set runAsUser=0`) : ALLOWED;
  },
};

const seccompRestricted: Check = {
  id: 'seccompProfile_restricted', level: 'restricted',
  check: (_m, spec) => {
    const badSetters: string[] = []; const values = new Set<string>();
    let podSet = false;
    const p = podSC(spec)?.['seccompProfile'];
    if (p && typeof p === 'object') {
      if (!validSeccomp((p as Obj)['type'])) { badSetters.push('pod'); values.add(String((p as Obj)['type'] ?? '')); } else podSet = true;
    }
    const explicit: string[] = []; const implicit: string[] = [];
    for (const c of containers(spec)) {
      const cp = sc(c)?.['seccompProfile'];
      if (cp && typeof cp === 'object') {
        if (!validSeccomp((cp as Obj)['type'])) { explicit.push(String(c['name'] ?? '')); values.add(String((cp as Obj)['type'] ?? '')); }
      } else if (!podSet) implicit.push(String(c['name'] ?? ''));
    }
    if (explicit.length) badSetters.push(containersPhrase(explicit));
    if (badSetters.length) return deny('seccompProfile', `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedUnique(values))}`);
    if (implicit.length) return deny('seccompProfile', `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`);
    return ALLOWED;
  },
};

/** Every check in upstream's registration order (its files in name order). */
export const CHECKS: readonly Check[] = [
  allowPrivilegeEscalation, appArmorProfile, capabilitiesBaseline, capabilitiesRestricted, hostNamespaces, hostPathVolumes, hostPorts,
  hostProbesAndHostLifecycle, privileged, procMount, restrictedVolumes, runAsNonRoot, runAsUser, seLinuxOptions, seccompBaseline,
  seccompRestricted, sysctls, windowsHostProcess,
];

/** The checks that apply at a level, in evaluation order (checkRegistry.EvaluatePod). */
export function checksFor(level: PodSecurityLevel): Check[] {
  if (level === 'privileged') return [];
  const baseline = CHECKS.filter((c) => c.level === 'baseline' && !c.overlap);
  if (level === 'baseline') return [...baseline, ...CHECKS.filter((c) => c.level === 'baseline' && c.overlap)];
  return [...baseline, ...CHECKS.filter((c) => c.level === 'restricted')];
}

/** Evaluates a pod (metadata + spec) at a level; the failed checks' `reason (detail)` parts, joined as upstream's ForbiddenDetail. */
export function evaluatePod(level: PodSecurityLevel, meta: Obj, spec: Obj): { allowed: boolean; reasons: string[]; detail: string } {
  const failed = checksFor(level).map((c) => c.check(meta, spec)).filter((r) => !r.allowed);
  return {
    allowed: failed.length === 0,
    reasons: failed.map((r) => r.forbiddenReason ?? ''),
    detail: failed.map((r) => (r.forbiddenDetail ? `${r.forbiddenReason} (${r.forbiddenDetail})` : r.forbiddenReason)).join(', '),
  };
}
