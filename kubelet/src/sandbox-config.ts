/**
 * The CRI configs the kubelet asks for (upstream kuberuntime `generatePodSandboxConfig`,
 * `generateContainerConfig`, `linuxContainerResources`): pure translations of the pod spec,
 * no decisions and no CRI calls.
 */
import type { Container, Pod } from '@mk8s/api';
import { parseBytes, parseCpuMillis } from '@mk8s/api';
import { normalizeImageRef, type ContainerConfig, type KeyValue, type LinuxContainerResources, type Mount, type PodSandboxConfig } from '@mk8s/proto';
import { expandVars, envMap } from './env.js';
import {
  CONTAINER_NAME_LABEL, CONTAINER_TYPE_LABEL, GRACE_ANNOTATION, HASH_ANNOTATION, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL,
  PRESTOP_ANNOTATION, RESTART_COUNT_ANNOTATION, TERMINATION_MESSAGE_PATH_ANNOTATION,
} from './labels.js';
import { specHash } from './pod-actions.js';
import { podDnsConfig, podHostname } from './dns.js';

export interface SandboxConfigOptions {
  /** @default ['10.96.0.10'] */
  clusterDNS?: string[];
  /** @default 'cluster.local' */
  clusterDomain?: string;
}

export function sandboxConfig(pod: Pod, attempt: number, o: SandboxConfigOptions = {}): PodSandboxConfig {
  const m = pod.metadata ?? {};
  const ns = m.namespace ?? 'default';
  const dns = podDnsConfig(pod, { clusterDNS: o.clusterDNS ?? ['10.96.0.10'], clusterDomain: o.clusterDomain ?? 'cluster.local' });
  const sysctls = Object.fromEntries((pod.spec?.securityContext?.sysctls ?? []).map((x) => [x.name, x.value]));
  return {
    metadata: { name: m.name ?? '', namespace: ns, uid: m.uid ?? '', attempt },
    hostname: pod.spec?.hostNetwork ? '' : podHostname(pod),
    ...(dns ? { dnsConfig: dns } : {}),
    labels: { ...(m.labels ?? {}), [POD_NAME_LABEL]: m.name ?? '', [POD_NAMESPACE_LABEL]: ns, [POD_UID_LABEL]: m.uid ?? '' },
    annotations: { ...(m.annotations ?? {}) },
    portMappings: (pod.spec?.containers ?? []).flatMap((c) => (c.ports ?? []).filter((p) => p.hostPort).map((p) => ({
      containerPort: p.containerPort, hostPort: p.hostPort!, protocol: (p.protocol ?? 'TCP') as 'TCP', ...(p.hostIP ? { hostIp: p.hostIP } : {}),
    }))),
    linux: {
      securityContext: { namespaceOptions: { network: pod.spec?.hostNetwork ? 'NODE' : 'POD', pid: pod.spec?.shareProcessNamespace ? 'POD' : 'CONTAINER', ipc: 'POD' } },
      // Upstream passes the pod's sysctls to the sandbox; one the kernel refuses fails it (FailedCreatePodSandBox).
      ...(Object.keys(sysctls).length ? { sysctls } : {}),
    },
  };
}

/** resources maps requests/limits to Docker's knobs (upstream `linuxContainerResources`). */
export function linuxResources(c: Container): LinuxContainerResources {
  const r: LinuxContainerResources = {};
  const req = c.resources?.requests ?? {}; const lim = c.resources?.limits ?? {};
  const cpuReq = req['cpu'] ?? lim['cpu'];
  r.cpuShares = cpuReq !== undefined ? Math.max(2, Math.floor(parseCpuMillis(cpuReq) * 1024 / 1000)) : 2;
  if (lim['cpu'] !== undefined) { r.cpuPeriod = 100_000; r.cpuQuota = Math.max(1000, Math.floor(parseCpuMillis(lim['cpu']) * 100_000 / 1000)); }
  if (lim['memory'] !== undefined) r.memoryLimitInBytes = parseBytes(lim['memory']);
  return r;
}

/** The container config for c at restartCount, with its resolved environment and mounts. */
export function containerConfig(pod: Pod, c: Container, o: { restartCount: number; init: boolean; envs: KeyValue[]; mounts: Mount[] }): ContainerConfig {
  const vars = envMap(o.envs);
  const m = pod.metadata ?? {};
  return {
    metadata: { name: c.name, attempt: o.restartCount },
    image: { image: normalizeImageRef(c.image ?? '') },
    ...(c.command?.length ? { command: c.command.map((x) => expandVars(x, vars)) } : {}),
    ...(c.args?.length ? { args: c.args.map((x) => expandVars(x, vars)) } : {}),
    ...(c.workingDir ? { workingDir: c.workingDir } : {}),
    envs: o.envs,
    mounts: o.mounts,
    labels: { [POD_NAME_LABEL]: m.name ?? '', [POD_NAMESPACE_LABEL]: m.namespace ?? 'default', [POD_UID_LABEL]: m.uid ?? '', [CONTAINER_NAME_LABEL]: c.name, [CONTAINER_TYPE_LABEL]: o.init ? 'init' : 'container' },
    annotations: {
      [HASH_ANNOTATION]: specHash(c),
      [RESTART_COUNT_ANNOTATION]: String(o.restartCount),
      [GRACE_ANNOTATION]: String(pod.spec?.terminationGracePeriodSeconds ?? 30),
      [TERMINATION_MESSAGE_PATH_ANNOTATION]: c.terminationMessagePath ?? '/dev/termination-log',
      ...(c.lifecycle?.preStop ? { [PRESTOP_ANNOTATION]: JSON.stringify(c.lifecycle.preStop) } : {}),
    },
    ...(c.stdin ? { stdin: true } : {}),
    ...(c.stdinOnce ? { stdinOnce: true } : {}),
    ...(c.tty ? { tty: true } : {}),
    linux: {
      resources: linuxResources(c),
      securityContext: {
        ...(c.securityContext?.privileged ? { privileged: true } : {}),
        ...(c.securityContext?.runAsUser !== undefined ? { runAsUser: { value: c.securityContext.runAsUser } } : pod.spec?.securityContext?.runAsUser !== undefined ? { runAsUser: { value: pod.spec.securityContext.runAsUser } } : {}),
        ...(c.securityContext?.readOnlyRootFilesystem ? { readonlyRootfs: true } : {}),
        ...(c.securityContext?.capabilities ? { capabilities: { addCapabilities: c.securityContext.capabilities.add ?? [], dropCapabilities: c.securityContext.capabilities.drop ?? [] } } : {}),
      },
    },
  };
}
