import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CHECKS, checksFor, evaluatePod, type Check } from './pod-security-policy.js';

type Obj = Record<string, unknown>;
const byId = (id: string): Check => CHECKS.find((c) => c.id === id)!;
const c = (name: string, securityContext?: Obj, extra: Obj = {}) => ({ name, image: 'busybox', ...(securityContext ? { securityContext } : {}), ...extra });
/** A pod that passes restricted. */
const goodSC = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };

interface Case { check: string; name: string; spec: Obj; meta?: Obj; reason?: string; detail?: string }
const cases: Case[] = [
  { check: 'privileged', name: 'unset passes', spec: { containers: [c('a')] } },
  { check: 'privileged', name: 'privileged=false passes', spec: { containers: [c('a', { privileged: false })] } },
  { check: 'privileged', name: 'two containers privileged', spec: { initContainers: [c('i', { privileged: true })], containers: [c('a', { privileged: true }), c('b')] },
    reason: 'privileged', detail: 'containers "i", "a" must not set securityContext.privileged=true' },
  { check: 'hostNamespaces', name: 'none passes', spec: { containers: [c('a')] } },
  { check: 'hostNamespaces', name: 'all three', spec: { hostNetwork: true, hostPID: true, hostIPC: true, containers: [c('a')] },
    reason: 'host namespaces', detail: 'hostNetwork=true, hostPID=true, hostIPC=true' },
  { check: 'hostPorts', name: 'containerPort only passes', spec: { containers: [c('a', undefined, { ports: [{ containerPort: 80 }] })] } },
  { check: 'hostPorts', name: 'one container two ports', spec: { containers: [c('a', undefined, { ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81, hostPort: 10 }] })] },
    reason: 'hostPort', detail: 'container "a" uses hostPorts 10, 8080' },
  { check: 'hostPorts', name: 'two containers', spec: { containers: [c('a', undefined, { ports: [{ hostPort: 1 }] }), c('b', undefined, { ports: [{ hostPort: 1 }] })] },
    reason: 'hostPort', detail: 'containers "a", "b" use hostPort 1' },
  { check: 'hostPathVolumes', name: 'emptyDir passes', spec: { volumes: [{ name: 'v', emptyDir: {} }], containers: [c('a')] } },
  { check: 'hostPathVolumes', name: 'hostPath', spec: { volumes: [{ name: 'h', hostPath: { path: '/' } }], containers: [c('a')] },
    reason: 'hostPath volumes', detail: 'volume "h"' },
  { check: 'capabilities_baseline', name: 'default caps pass', spec: { containers: [c('a', { capabilities: { add: ['CHOWN', 'NET_BIND_SERVICE'] } })] } },
  { check: 'capabilities_baseline', name: 'NET_ADMIN and SYS_ADMIN', spec: { containers: [c('a', { capabilities: { add: ['SYS_ADMIN', 'NET_ADMIN'] } })] },
    reason: 'non-default capabilities', detail: 'container "a" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add' },
  { check: 'procMount', name: 'Default passes', spec: { containers: [c('a', { procMount: 'Default' })] } },
  { check: 'procMount', name: 'Unmasked', spec: { containers: [c('a', { procMount: 'Unmasked' })] },
    reason: 'procMount', detail: 'container "a" must not set securityContext.procMount to "Unmasked"' },
  { check: 'seLinuxOptions', name: 'container_t passes', spec: { securityContext: { seLinuxOptions: { type: 'container_t' } }, containers: [c('a')] } },
  { check: 'seLinuxOptions', name: 'bad type and user', spec: { securityContext: { seLinuxOptions: { type: 'spc_t', user: 'root' } }, containers: [c('a')] },
    reason: 'seLinuxOptions', detail: 'pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set' },
  { check: 'seccompProfile_baseline', name: 'unset passes', spec: { containers: [c('a')] } },
  { check: 'seccompProfile_baseline', name: 'Unconfined on pod and container', spec: { securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [c('a', { seccompProfile: { type: 'Unconfined' } })] },
    reason: 'seccompProfile', detail: 'pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined"' },
  { check: 'sysctls', name: 'safe sysctl passes', spec: { securityContext: { sysctls: [{ name: 'net.ipv4.tcp_syncookies', value: '1' }] }, containers: [c('a')] } },
  { check: 'sysctls', name: 'unsafe sysctls', spec: { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }, { name: 'vm.swappiness', value: '1' }] }, containers: [c('a')] },
    reason: 'forbidden sysctls', detail: 'kernel.msgmax, vm.swappiness' },
  { check: 'hostProbesAndHostLifecycle', name: 'probe without host passes', spec: { containers: [c('a', undefined, { livenessProbe: { httpGet: { port: 80 } } })] } },
  { check: 'hostProbesAndHostLifecycle', name: 'probe host', spec: { containers: [c('a', undefined, { livenessProbe: { httpGet: { port: 80, host: '1.2.3.4' } } })] },
    reason: 'probe or lifecycle host', detail: 'container "a" uses probe or lifecycle host "1.2.3.4"' },
  { check: 'windowsHostProcess', name: 'hostProcess', spec: { securityContext: { windowsOptions: { hostProcess: true } }, containers: [c('a')] },
    reason: 'hostProcess', detail: 'pod must not set securityContext.windowsOptions.hostProcess=true' },
  { check: 'allowPrivilegeEscalation', name: 'false passes', spec: { containers: [c('a', { allowPrivilegeEscalation: false })] } },
  { check: 'allowPrivilegeEscalation', name: 'unset', spec: { containers: [c('a')] },
    reason: 'allowPrivilegeEscalation != false', detail: 'container "a" must set securityContext.allowPrivilegeEscalation=false' },
  { check: 'capabilities_restricted', name: 'drop ALL add NET_BIND_SERVICE passes', spec: { containers: [c('a', { capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } })] } },
  { check: 'capabilities_restricted', name: 'missing drop and adding CHOWN', spec: { containers: [c('a'), c('b', { capabilities: { drop: ['ALL'], add: ['CHOWN'] } })] },
    reason: 'unrestricted capabilities', detail: 'container "a" must set securityContext.capabilities.drop=["ALL"]; container "b" must not include "CHOWN" in securityContext.capabilities.add' },
  { check: 'restrictedVolumes', name: 'projected/configMap/secret pass', spec: { volumes: [{ name: 'p', projected: {} }, { name: 'c', configMap: {} }, { name: 's', secret: {} }], containers: [c('a')] } },
  { check: 'restrictedVolumes', name: 'hostPath and nfs', spec: { volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'n', nfs: {} }], containers: [c('a')] },
    reason: 'restricted volume types', detail: 'volumes "h", "n" use restricted volume types "hostPath", "nfs"' },
  { check: 'runAsNonRoot', name: 'pod-level true passes', spec: { securityContext: { runAsNonRoot: true }, containers: [c('a')] } },
  { check: 'runAsNonRoot', name: 'unset', spec: { containers: [c('a')] },
    reason: 'runAsNonRoot != true', detail: 'pod or container "a" must set securityContext.runAsNonRoot=true' },
  { check: 'runAsNonRoot', name: 'explicit false', spec: { securityContext: { runAsNonRoot: false }, containers: [c('a', { runAsNonRoot: false })] },
    reason: 'runAsNonRoot != true', detail: 'pod and container "a" must not set securityContext.runAsNonRoot=false' },
  { check: 'runAsUser', name: 'uid 1000 passes', spec: { securityContext: { runAsUser: 1000 }, containers: [c('a')] } },
  { check: 'runAsUser', name: 'uid 0', spec: { containers: [c('a', { runAsUser: 0 })] }, reason: 'runAsUser=0', detail: 'container "a" must not set runAsUser=0' },
  { check: 'seccompProfile_restricted', name: 'pod RuntimeDefault passes', spec: { securityContext: { seccompProfile: { type: 'RuntimeDefault' } }, containers: [c('a')] } },
  { check: 'seccompProfile_restricted', name: 'unset', spec: { containers: [c('a')] },
    reason: 'seccompProfile', detail: 'pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"' },
  { check: 'appArmorProfile', name: 'Unconfined annotation', spec: { containers: [c('a')] }, meta: { annotations: { 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined' } },
    reason: 'forbidden AppArmor profile', detail: 'annotation container.apparmor.security.beta.kubernetes.io/a="unconfined"' },
];

describe('Pod Security Standards checks', () => {
  for (const tc of cases) {
    test(`${tc.check}: ${tc.name}`, () => {
      const r = byId(tc.check).check(tc.meta ?? {}, tc.spec);
      if (!tc.reason) { assert.equal(r.allowed, true, JSON.stringify(r)); return; }
      assert.deepEqual(r, { allowed: false, forbiddenReason: tc.reason, forbiddenDetail: tc.detail });
    });
  }
});

describe('evaluatePod', () => {
  test('restricted: a bare container fails the four checks, in upstream order', () => {
    const r = evaluatePod('restricted', {}, { containers: [c('c')] });
    assert.equal(r.detail, 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
      + 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
      + 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
      + 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
  });
  test('restricted: baseline violations come first; a restricted-compliant pod passes', () => {
    const r = evaluatePod('restricted', {}, { hostNetwork: true, containers: [c('c', { ...goodSC, privileged: true })] });
    assert.deepEqual(r.reasons, ['host namespaces', 'privileged']);
    assert.equal(evaluatePod('restricted', {}, { containers: [c('c', goodSC)] }).allowed, true);
  });
  test('baseline passes a plain pod and refuses privileged; privileged allows everything', () => {
    assert.equal(evaluatePod('baseline', {}, { containers: [c('c')] }).allowed, true);
    assert.equal(evaluatePod('baseline', {}, { containers: [c('c', { privileged: true })] }).detail,
      'privileged (container "c" must not set securityContext.privileged=true)');
    assert.equal(evaluatePod('privileged', {}, { hostPID: true, containers: [c('c', { privileged: true })] }).allowed, true);
  });
  test('overlapping baseline checks run at baseline only', () => {
    const ids = (l: 'baseline' | 'restricted') => checksFor(l).map((x) => x.id);
    assert.ok(ids('baseline').includes('hostPathVolumes') && !ids('restricted').includes('hostPathVolumes'));
    assert.ok(ids('restricted').includes('restrictedVolumes') && !ids('baseline').includes('restrictedVolumes'));
  });
});
