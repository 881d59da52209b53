/**
 * Pure describers (kubectl/pkg/describe): object + related objects + events → text. The fetching
 * lives in commands/describe.ts so these stay table-testable.
 */
import type * as core from 'kubernetes-types/core/v1.js';
import type * as apps from 'kubernetes-types/apps/v1.js';
import type * as discovery from 'kubernetes-types/discovery/v1.js';
import {
  describeEvents, formatLabelSelector, LEVEL_0, LEVEL_1, LEVEL_2, LEVEL_3, PrefixWriter, printAnnotationsMultiline,
  printLabelsMultiline, printTolerationsMultiline, rfc1123z, type EventLike,
} from './prefix-writer.js';
import { formatLabels } from '../printers/table.js';
import { parseCpuMillis, parseQuantity } from '@mk8s/api';

type OwnerRefs = { ownerReferences?: { controller?: boolean; kind: string; name: string }[] } | undefined;
const controllerOf = (m: OwnerRefs) => m?.ownerReferences?.find((r) => r.controller);
const bool = (b: boolean | undefined) => (b ? 'True' : 'False');

function describeContainerState(w: PrefixWriter, name: string, st: core.ContainerState | undefined): void {
  if (st?.running) {
    w.write(LEVEL_2, `${name}:\tRunning\n`);
    w.write(LEVEL_3, `Started:\t${rfc1123z(st.running.startedAt)}\n`);
  } else if (st?.waiting) {
    w.write(LEVEL_2, `${name}:\tWaiting\n`);
    if (st.waiting.reason) w.write(LEVEL_3, `Reason:\t${st.waiting.reason}\n`);
  } else if (st?.terminated) {
    const t = st.terminated;
    w.write(LEVEL_2, `${name}:\tTerminated\n`);
    if (t.reason) w.write(LEVEL_3, `Reason:\t${t.reason}\n`);
    if (t.message) w.write(LEVEL_3, `Message:\t${t.message}\n`);
    w.write(LEVEL_3, `Exit Code:\t${t.exitCode}\n`);
    if ((t.signal ?? 0) > 0) w.write(LEVEL_3, `Signal:\t${t.signal}\n`);
    w.write(LEVEL_3, `Started:\t${rfc1123z(t.startedAt)}\n`);
    w.write(LEVEL_3, `Finished:\t${rfc1123z(t.finishedAt)}\n`);
  } else w.write(LEVEL_2, `${name}:\tWaiting\n`);
}

/** kubectl's DescribeProbe. */
export function describeProbe(p: core.Probe): string {
  const attrs = `delay=${p.initialDelaySeconds ?? 0}s timeout=${p.timeoutSeconds ?? 1}s period=${p.periodSeconds ?? 10}s #success=${p.successThreshold ?? 1} #failure=${p.failureThreshold ?? 3}`;
  if (p.exec) return `exec [${(p.exec.command ?? []).join(' ')}] ${attrs}`;
  if (p.httpGet) {
    const scheme = (p.httpGet.scheme ?? 'HTTP').toLowerCase();
    const port = String(p.httpGet.port ?? '');
    const host = port ? `${p.httpGet.host ?? ''}:${port}` : (p.httpGet.host ?? '');
    return `http-get ${scheme}://${host}${p.httpGet.path ?? ''} ${attrs}`;
  }
  if (p.tcpSocket) return `tcp-socket ${p.tcpSocket.host ?? ''}:${String(p.tcpSocket.port)} ${attrs}`;
  if (p.grpc) return `grpc <pod>:${p.grpc.port} ${p.grpc.service ?? ''} ${attrs}`;
  return `unknown ${attrs}`;
}

function describeContainers(w: PrefixWriter, label: string, containers: core.Container[], statuses: core.ContainerStatus[] | undefined, space: string): void {
  if (!containers.length) { w.write(LEVEL_0, `${space}${label}: <none>\n`); return; }
  w.write(LEVEL_0, `${space}${label}:\n`);
  const nameIndent = space ? ' ' : '';
  for (const c of containers) {
    const st = statuses?.find((s) => s.name === c.name);
    const ok = statuses !== undefined && st !== undefined;
    w.write(LEVEL_1, `${nameIndent}${c.name}:\n`);
    if (ok) w.write(LEVEL_2, `Container ID:\t${st.containerID ?? ''}\n`);
    w.write(LEVEL_2, `Image:\t${c.image ?? ''}\n`);
    if (ok) w.write(LEVEL_2, `Image ID:\t${st.imageID ?? ''}\n`);
    const ports = (c.ports ?? []).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`).join(', ');
    if (ports.includes(',')) w.write(LEVEL_2, `Ports:\t${ports}\n`); else w.write(LEVEL_2, `Port:\t${ports || '<none>'}\n`);
    const hostPorts = (c.ports ?? []).map((p) => `${p.hostPort ?? 0}/${p.protocol ?? 'TCP'}`).join(', ');
    if (hostPorts.includes(',')) w.write(LEVEL_2, `Host Ports:\t${hostPorts}\n`); else w.write(LEVEL_2, `Host Port:\t${hostPorts || '<none>'}\n`);
    if (c.command?.length) { w.write(LEVEL_2, 'Command:\n'); for (const x of c.command) for (const s of x.split('\n')) w.write(LEVEL_3, `${s}\n`); }
    if (c.args?.length) { w.write(LEVEL_2, 'Args:\n'); for (const x of c.args) for (const s of x.split('\n')) w.write(LEVEL_3, `${s}\n`); }
    if (ok) {
      describeContainerState(w, 'State', st.state);
      if (st.lastState?.terminated) describeContainerState(w, 'Last State', st.lastState);
      w.write(LEVEL_2, `Ready:\t${bool(st.ready)}\n`);
      w.write(LEVEL_2, `Restart Count:\t${st.restartCount ?? 0}\n`);
    }
    for (const [title, list] of [['Limits', c.resources?.limits], ['Requests', c.resources?.requests]] as const) {
      const keys = Object.keys(list ?? {}).sort();
      if (!keys.length) continue;
      w.write(LEVEL_2, `${title}:\n`);
      for (const k of keys) w.write(LEVEL_3, `${k}:\t${String(list![k])}\n`);
    }
    if (c.livenessProbe) w.write(LEVEL_2, `Liveness:\t${describeProbe(c.livenessProbe)}\n`);
    if (c.readinessProbe) w.write(LEVEL_2, `Readiness:\t${describeProbe(c.readinessProbe)}\n`);
    if (c.startupProbe) w.write(LEVEL_2, `Startup:\t${describeProbe(c.startupProbe)}\n`);
    if (c.envFrom?.length) {
      w.write(LEVEL_2, 'Environment Variables from:\n');
      for (const e of c.envFrom) {
        const from = e.configMapRef ? 'ConfigMap' : 'Secret';
        const ref = e.configMapRef ?? e.secretRef;
        const optional = !!ref?.optional;
        if (e.prefix) w.write(LEVEL_3, `${ref?.name ?? ''}\t${from} with prefix '${e.prefix}'\tOptional: ${optional}\n`);
        else w.write(LEVEL_3, `${ref?.name ?? ''}\t${from}\tOptional: ${optional}\n`);
      }
    }
    w.write(LEVEL_2, `Environment:${c.env?.length ? '' : '\t<none>'}\n`);
    for (const e of c.env ?? []) {
      const vf = e.valueFrom;
      if (!vf) {
        (e.value ?? '').split('\n').forEach((s, i) => w.write(LEVEL_3, i === 0 ? `${e.name}:\t${s}\n` : `\t${s}\n`));
      } else if (vf.fieldRef) w.write(LEVEL_3, `${e.name}:\t (${vf.fieldRef.apiVersion ?? 'v1'}:${vf.fieldRef.fieldPath})\n`);
      else if (vf.resourceFieldRef) w.write(LEVEL_3, `${e.name}:\t (${vf.resourceFieldRef.resource})\n`);
      else if (vf.secretKeyRef) w.write(LEVEL_3, `${e.name}:\t<set to the key '${vf.secretKeyRef.key}' in secret '${vf.secretKeyRef.name ?? ''}'>\tOptional: ${!!vf.secretKeyRef.optional}\n`);
      else if (vf.configMapKeyRef) w.write(LEVEL_3, `${e.name}:\t<set to the key '${vf.configMapKeyRef.key}' of config map '${vf.configMapKeyRef.name ?? ''}'>\tOptional: ${!!vf.configMapKeyRef.optional}\n`);
    }
    const mounts = [...(c.volumeMounts ?? [])].sort((a, b) => a.mountPath.localeCompare(b.mountPath));
    w.write(LEVEL_2, `Mounts:${mounts.length ? '' : '\t<none>'}\n`);
    for (const m of mounts) {
      const flags = [m.readOnly ? 'ro' : 'rw'];
      if (m.subPath) flags.push(`path=${JSON.stringify(m.subPath)}`);
      w.write(LEVEL_3, `${m.mountPath} from ${m.name} (${flags.join(',')})\n`);
    }
  }
}

function describeVolumes(w: PrefixWriter, volumes: core.Volume[] | undefined, space: string): void {
  if (!volumes?.length) { w.write(LEVEL_0, `${space}Volumes:\t<none>\n`); return; }
  w.write(LEVEL_0, `${space}Volumes:\n`);
  const nameIndent = space ? ' ' : '';
  for (const v of volumes) {
    w.write(LEVEL_1, `${nameIndent}${v.name}:\n`);
    if (v.hostPath) w.write(LEVEL_2, `Type:\tHostPath (bare host directory volume)\n    Path:\t${v.hostPath.path}\n    HostPathType:\t${v.hostPath.type || '<none>'}\n`);
    else if (v.emptyDir) w.write(LEVEL_2, `Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t${v.emptyDir.medium ?? ''}\n    SizeLimit:\t${v.emptyDir.sizeLimit ? String(v.emptyDir.sizeLimit) : '<unset>'}\n`);
    else if (v.secret) w.write(LEVEL_2, `Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t${v.secret.secretName ?? ''}\n    Optional:\t${!!v.secret.optional}\n`);
    else if (v.configMap) w.write(LEVEL_2, `Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t${v.configMap.name ?? ''}\n    Optional:\t${!!v.configMap.optional}\n`);
    else if (v.projected) {
      w.write(LEVEL_2, 'Type:\tProjected (a volume that contains injected data from multiple sources)\n');
      for (const s of v.projected.sources ?? []) {
        if (s.secret) w.write(LEVEL_2, `SecretName:\t${s.secret.name ?? ''}\n    SecretOptionalName:\t${s.secret.optional ?? '<nil>'}\n`);
        else if (s.downwardAPI) w.write(LEVEL_2, 'DownwardAPI:\ttrue\n');
        else if (s.configMap) w.write(LEVEL_2, `ConfigMapName:\t${s.configMap.name ?? ''}\n    ConfigMapOptional:\t${s.configMap.optional ?? '<nil>'}\n`);
        else if (s.serviceAccountToken) w.write(LEVEL_2, `TokenExpirationSeconds:\t${s.serviceAccountToken.expirationSeconds ?? 3607}\n`);
      }
    } else if (v.persistentVolumeClaim) w.write(LEVEL_2, `Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t${v.persistentVolumeClaim.claimName}\n    ReadOnly:\t${!!v.persistentVolumeClaim.readOnly}\n`);
    else w.write(LEVEL_1, '<unknown>\n');
  }
}

function qosOf(pod: core.Pod): string {
  if (pod.status?.qosClass) return pod.status.qosClass;
  const cs = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  const any = cs.some((c) => Object.keys(c.resources?.requests ?? {}).length || Object.keys(c.resources?.limits ?? {}).length);
  if (!any) return 'BestEffort';
  const guaranteed = cs.every((c) => ['cpu', 'memory'].every((r) => c.resources?.limits?.[r] !== undefined && (c.resources?.requests?.[r] === undefined || String(c.resources.requests[r]) === String(c.resources.limits[r]))));
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export function describePod(pod: core.Pod, events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = pod.metadata ?? {};
  const spec = pod.spec ?? { containers: [] };
  const st = pod.status ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  if (spec.priority !== undefined) w.write(LEVEL_0, `Priority:\t${spec.priority}\n`);
  if (spec.priorityClassName) w.write(LEVEL_0, `Priority Class Name:\t${spec.priorityClassName}\n`);
  if (spec.runtimeClassName) w.write(LEVEL_0, `Runtime Class Name:\t${spec.runtimeClassName}\n`);
  if (spec.serviceAccountName) w.write(LEVEL_0, `Service Account:\t${spec.serviceAccountName}\n`);
  w.write(LEVEL_0, spec.nodeName ? `Node:\t${spec.nodeName}/${st.hostIP ?? ''}\n` : 'Node:\t<none>\n');
  if (st.startTime) w.write(LEVEL_0, `Start Time:\t${rfc1123z(st.startTime)}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  if (m.deletionTimestamp) {
    w.write(LEVEL_0, `Status:\tTerminating (lasts ${since(m.deletionTimestamp, now)})\n`);
    w.write(LEVEL_0, `Termination Grace Period:\t${m.deletionGracePeriodSeconds ?? 0}s\n`);
  } else w.write(LEVEL_0, `Status:\t${st.phase ?? ''}\n`);
  if (st.reason) w.write(LEVEL_0, `Reason:\t${st.reason}\n`);
  if (st.message) w.write(LEVEL_0, `Message:\t${st.message}\n`);
  w.write(LEVEL_0, `IP:\t${st.podIP ?? ''}\n`);
  if (!st.podIPs?.length) w.write(LEVEL_0, 'IPs:\t<none>\n');
  else { w.write(LEVEL_0, 'IPs:\n'); for (const ip of st.podIPs) w.write(LEVEL_1, `IP:\t${ip.ip ?? ''}\n`); }
  const ctl = controllerOf(m);
  if (ctl) w.write(LEVEL_0, `Controlled By:\t${ctl.kind}/${ctl.name}\n`);
  if (st.nominatedNodeName) w.write(LEVEL_0, `NominatedNodeName:\t${st.nominatedNodeName}\n`);
  if (spec.initContainers?.length) describeContainers(w, 'Init Containers', spec.initContainers, st.initContainerStatuses ?? [], '');
  describeContainers(w, 'Containers', spec.containers, st.containerStatuses ?? [], '');
  if (spec.readinessGates?.length) {
    w.write(LEVEL_0, 'Readiness Gates:\n  Type\tStatus\n');
    for (const g of spec.readinessGates) w.write(LEVEL_1, `${g.conditionType} \t${st.conditions?.find((c) => c.type === g.conditionType)?.status ?? '<none>'} \n`);
  }
  if (st.conditions?.length) {
    w.write(LEVEL_0, 'Conditions:\n  Type\tStatus\n');
    for (const c of st.conditions) w.write(LEVEL_1, `${c.type} \t${c.status} \n`);
  }
  describeVolumes(w, spec.volumes, '');
  w.write(LEVEL_0, `QoS Class:\t${qosOf(pod)}\n`);
  printLabelsMultiline(w, 'Node-Selectors', spec.nodeSelector);
  printTolerationsMultiline(w, 'Tolerations', spec.tolerations);
  if (events) describeEvents(w, events, now);
  return w.toString();
}

function since(ts: string | undefined, now: number): string {
  return ts ? humanSince(ts, now) : '<unknown>';
}
import { humanDuration } from '@mk8s/api';
const humanSince = (ts: string, now: number) => humanDuration(now - Date.parse(ts));

export function describePodTemplate(w: PrefixWriter, t: core.PodTemplateSpec | undefined): void {
  w.write(LEVEL_0, 'Pod Template:\n');
  if (!t) { w.write(LEVEL_1, '<unset>'); return; }
  printLabelsMultiline(w, 'Labels', t.metadata?.labels, '  ');
  if (Object.keys(t.metadata?.annotations ?? {}).length) printAnnotationsMultiline(w, 'Annotations', t.metadata?.annotations, '  ');
  if (t.spec?.serviceAccountName) w.write(LEVEL_1, `Service Account:\t${t.spec.serviceAccountName}\n`);
  if (t.spec?.initContainers?.length) describeContainers(w, 'Init Containers', t.spec.initContainers, undefined, '  ');
  describeContainers(w, 'Containers', t.spec?.containers ?? [], undefined, '  ');
  describeVolumes(w, t.spec?.volumes, '  ');
  if (t.spec?.priorityClassName) w.write(LEVEL_1, `Priority Class Name:\t${t.spec.priorityClassName}\n`);
  printLabelsMultiline(w, 'Node-Selectors', t.spec?.nodeSelector, '  ');
  printTolerationsMultiline(w, 'Tolerations', t.spec?.tolerations, '  ');
}

export function conditionsTable(w: PrefixWriter, conds: { type: string; status: string; reason?: string }[] | undefined): void {
  if (!conds?.length) return;
  w.write(LEVEL_0, 'Conditions:\n  Type\tStatus\tReason\n');
  w.write(LEVEL_1, '----\t------\t------\n');
  for (const c of conds) w.write(LEVEL_1, `${c.type} \t${c.status}\t${c.reason ?? ''}\n`);
}

const rsSummary = (rss: apps.ReplicaSet[]) => (rss.length ? rss.map((r) => `${r.metadata?.name ?? ''} (${r.status?.replicas ?? 0}/${r.spec?.replicas ?? 0} replicas created)`).join(', ') : '<none>');

export function describeDeployment(d: apps.Deployment, replicaSets: apps.ReplicaSet[], events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = d.metadata ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  w.write(LEVEL_0, `CreationTimestamp:\t${rfc1123z(m.creationTimestamp)}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, `Selector:\t${formatLabelSelector(d.spec?.selector)}\n`);
  const s = d.status ?? {};
  w.write(LEVEL_0, `Replicas:\t${d.spec?.replicas ?? 1} desired | ${s.updatedReplicas ?? 0} updated | ${s.replicas ?? 0} total | ${s.availableReplicas ?? 0} available | ${s.unavailableReplicas ?? 0} unavailable\n`);
  w.write(LEVEL_0, `StrategyType:\t${d.spec?.strategy?.type ?? ''}\n`);
  w.write(LEVEL_0, `MinReadySeconds:\t${d.spec?.minReadySeconds ?? 0}\n`);
  const ru = d.spec?.strategy?.rollingUpdate;
  if (ru) w.write(LEVEL_0, `RollingUpdateStrategy:\t${String(ru.maxUnavailable ?? '25%')} max unavailable, ${String(ru.maxSurge ?? '25%')} max surge\n`);
  describePodTemplate(w, d.spec?.template);
  conditionsTable(w, s.conditions);
  const rev = m.annotations?.['deployment.kubernetes.io/revision'];
  const owned = replicaSets.filter((r) => r.metadata?.ownerReferences?.some((o) => o.uid === m.uid));
  const newRs = owned.filter((r) => rev !== undefined && r.metadata?.annotations?.['deployment.kubernetes.io/revision'] === rev);
  const old = owned.filter((r) => !newRs.includes(r) && ((r.spec?.replicas ?? 0) > 0 || (r.status?.replicas ?? 0) > 0));
  w.write(LEVEL_0, `OldReplicaSets:\t${rsSummary(old)}\n`);
  w.write(LEVEL_0, `NewReplicaSet:\t${rsSummary(newRs)}\n`);
  if (events) describeEvents(w, events, now);
  return w.toString();
}

export function describeReplicaSet(rs: apps.ReplicaSet, pods: core.Pod[], events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = rs.metadata ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  w.write(LEVEL_0, `Selector:\t${formatLabelSelector(rs.spec?.selector)}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  const ctl = controllerOf(m);
  if (ctl) w.write(LEVEL_0, `Controlled By:\t${ctl.kind}/${ctl.name}\n`);
  w.write(LEVEL_0, `Replicas:\t${rs.status?.replicas ?? 0} current / ${rs.spec?.replicas ?? 1} desired\n`);
  const count = (p: string) => pods.filter((x) => x.status?.phase === p).length;
  w.write(LEVEL_0, `Pods Status:\t${count('Running')} Running / ${count('Pending')} Waiting / ${count('Succeeded')} Succeeded / ${count('Failed')} Failed\n`);
  describePodTemplate(w, rs.spec?.template);
  conditionsTable(w, rs.status?.conditions);
  if (events) describeEvents(w, events, now);
  return w.toString();
}

/** formatEndpointSlices: up to three ip:port, then "+ N more...". */
export function formatEndpoints(slices: discovery.EndpointSlice[], portName: string | undefined): string {
  const list: string[] = [];
  let more = 0;
  for (const s of slices) {
    const port = (s.ports ?? []).find((p) => (p.name ?? '') === (portName ?? ''));
    if (!port) continue;
    for (const ep of s.endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      for (const a of ep.addresses) { if (list.length < 3) list.push(`${a}:${port.port ?? 0}`); else more++; }
    }
  }
  return more ? `${list.join(',')} + ${more} more...` : list.join(',');
}

export function describeService(svc: core.Service, slices: discovery.EndpointSlice[], events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = svc.metadata ?? {};
  const sp = svc.spec ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, `Selector:\t${formatLabels(sp.selector).replace('<none>', '')}\n`);
  w.write(LEVEL_0, `Type:\t${sp.type ?? 'ClusterIP'}\n`);
  if (sp.ipFamilyPolicy) w.write(LEVEL_0, `IP Family Policy:\t${sp.ipFamilyPolicy}\n`);
  w.write(LEVEL_0, `IP Families:\t${sp.ipFamilies?.length ? sp.ipFamilies.join(',') : '<none>'}\n`);
  w.write(LEVEL_0, `IP:\t${sp.clusterIP ?? ''}\n`);
  w.write(LEVEL_0, `IPs:\t${sp.clusterIPs?.length ? sp.clusterIPs.join(',') : '<none>'}\n`);
  if (sp.externalIPs?.length) w.write(LEVEL_0, `External IPs:\t${sp.externalIPs.join(',')}\n`);
  if (sp.externalName) w.write(LEVEL_0, `External Name:\t${sp.externalName}\n`);
  for (const p of sp.ports ?? []) {
    w.write(LEVEL_0, `Port:\t${p.name || '<unset>'}\t${p.port}/${p.protocol ?? 'TCP'}\n`);
    w.write(LEVEL_0, `TargetPort:\t${String(p.targetPort ?? p.port)}/${p.protocol ?? 'TCP'}\n`);
    if (p.nodePort) w.write(LEVEL_0, `NodePort:\t${p.name || '<unset>'}\t${p.nodePort}/${p.protocol ?? 'TCP'}\n`);
    w.write(LEVEL_0, `Endpoints:\t${formatEndpoints(slices, p.name)}\n`);
  }
  w.write(LEVEL_0, `Session Affinity:\t${sp.sessionAffinity ?? 'None'}\n`);
  if (sp.externalTrafficPolicy) w.write(LEVEL_0, `External Traffic Policy:\t${sp.externalTrafficPolicy}\n`);
  if (sp.internalTrafficPolicy) w.write(LEVEL_0, `Internal Traffic Policy:\t${sp.internalTrafficPolicy}\n`);
  if (events) describeEvents(w, events, now);
  return w.toString();
}

export function describeNamespace(ns: core.Namespace): string {
  const w = new PrefixWriter();
  const m = ns.metadata ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, `Status:\t${ns.status?.phase ?? ''}\n`);
  return w.toString();
}

export function describeConfigMap(cm: core.ConfigMap, events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = cm.metadata ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, '\nData\n====\n');
  for (const k of Object.keys(cm.data ?? {}).sort()) {
    w.write(LEVEL_0, `${k}:\n----\n`);
    w.write(LEVEL_0, `${cm.data![k]}\n\n`);
  }
  w.write(LEVEL_0, '\nBinaryData\n====\n');
  for (const k of Object.keys(cm.binaryData ?? {}).sort()) w.write(LEVEL_0, `${k}: ${Buffer.from(cm.binaryData![k]!, 'base64').length} bytes\n`);
  w.write(LEVEL_0, '\n');
  if (events) describeEvents(w, events, now);
  return w.toString();
}

export function describeNode(node: core.Node, pods: core.Pod[], events: EventLike[] | undefined, now: number, lease?: { spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string } }): string {
  const w = new PrefixWriter();
  const m = node.metadata ?? {};
  const st = node.status ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  const roles = Object.keys(m.labels ?? {}).filter((k) => k.startsWith('node-role.kubernetes.io/')).map((k) => k.slice('node-role.kubernetes.io/'.length));
  w.write(LEVEL_0, `Roles:\t${roles.length ? roles.sort().join(',') : '<none>'}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, `CreationTimestamp:\t${rfc1123z(m.creationTimestamp)}\n`);
  const taints = node.spec?.taints ?? [];
  w.write(LEVEL_0, `Taints:\t${taints.length ? '' : '<none>\n'}`);
  taints.forEach((t, i) => { if (i) w.write(LEVEL_0, '\t'); w.write(LEVEL_0, `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}\n`); });
  w.write(LEVEL_0, `Unschedulable:\t${!!node.spec?.unschedulable}\n`);
  w.write(LEVEL_0, 'Lease:\n');
  w.write(LEVEL_1, `HolderIdentity:\t${lease?.spec?.holderIdentity ?? '<unset>'}\n`);
  w.write(LEVEL_1, `AcquireTime:\t${lease?.spec?.acquireTime ? rfc1123z(lease.spec.acquireTime) : '<unset>'}\n`);
  w.write(LEVEL_1, `RenewTime:\t${lease?.spec?.renewTime ? rfc1123z(lease.spec.renewTime) : '<unset>'}\n`);
  if (st.conditions?.length) {
    w.write(LEVEL_0, 'Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n');
    w.write(LEVEL_1, '----\t------\t-----------------\t------------------\t------\t-------\n');
    for (const c of st.conditions) w.write(LEVEL_1, `${c.type} \t${c.status} \t${rfc1123z(c.lastHeartbeatTime)} \t${rfc1123z(c.lastTransitionTime)} \t${c.reason ?? ''} \t${c.message ?? ''}\n`);
  }
  w.write(LEVEL_0, 'Addresses:\n');
  for (const a of st.addresses ?? []) w.write(LEVEL_1, `${a.type}:\t${a.address}\n`);
  for (const [title, list] of [['Capacity', st.capacity], ['Allocatable', st.allocatable]] as const) {
    if (!list) continue;
    w.write(LEVEL_0, `${title}:\n`);
    for (const k of Object.keys(list).sort()) w.write(LEVEL_1, `${k}:\t${String(list[k])}\n`);
  }
  const ni = st.nodeInfo;
  if (ni) {
    w.write(LEVEL_0, 'System Info:\n');
    const rows: [string, string][] = [['Machine ID', ni.machineID], ['System UUID', ni.systemUUID], ['Boot ID', ni.bootID], ['Kernel Version', ni.kernelVersion], ['OS Image', ni.osImage], ['Operating System', ni.operatingSystem], ['Architecture', ni.architecture], ['Container Runtime Version', ni.containerRuntimeVersion], ['Kubelet Version', ni.kubeletVersion], ['Kube-Proxy Version', ni.kubeProxyVersion]];
    for (const [k, v] of rows) w.write(LEVEL_1, `${k}:\t${v ?? ''}\n`);
  }
  if (node.spec?.podCIDR) w.write(LEVEL_0, `PodCIDR:\t${node.spec.podCIDR}\n`);
  if (node.spec?.podCIDRs?.length) w.write(LEVEL_0, `PodCIDRs:\t${node.spec.podCIDRs.join(',')}\n`);
  const running = pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  w.write(LEVEL_0, `Non-terminated Pods:\t(${running.length} in total)\n`);
  w.write(LEVEL_1, 'Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n');
  w.write(LEVEL_1, '---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n');
  for (const p of running) {
    const sum = (kind: 'requests' | 'limits', r: string) => (p.spec?.containers ?? []).map((c) => c.resources?.[kind]?.[r]).filter((x) => x !== undefined).map(String);
    const alloc = node.status?.allocatable ?? {};
    const show = (v: string[], r: string) => {
      if (!v.length) return '0 (0%)';
      const n = v.reduce((a, x) => a + (r === 'cpu' ? parseCpuMillis(x) : parseQuantity(x)), 0);
      const capRaw = alloc[r];
      const cap = capRaw === undefined ? 0 : r === 'cpu' ? parseCpuMillis(String(capRaw)) : parseQuantity(String(capRaw));
      return `${v.length === 1 ? v[0]! : String(n)} (${cap > 0 ? Math.trunc((n * 100) / cap) : 0}%)`;
    };
    w.write(LEVEL_1, `${p.metadata?.namespace ?? ''}\t${p.metadata?.name ?? ''}\t\t${show(sum('requests', 'cpu'), 'cpu')}\t${show(sum('limits', 'cpu'), 'cpu')}\t${show(sum('requests', 'memory'), 'memory')}\t${show(sum('limits', 'memory'), 'memory')}\t${since(p.metadata?.creationTimestamp, now)}\n`);
  }
  describeAllocated(w, node, running);
  if (events) describeEvents(w, events, now);
  return w.toString();
}

function describeAllocated(w: PrefixWriter, node: core.Node, pods: core.Pod[]): void {
  const alloc = node.status?.allocatable ?? {};
  const total = (kind: 'requests' | 'limits', r: string) => pods.flatMap((p) => p.spec?.containers ?? []).reduce((n, c) => {
    const v = c.resources?.[kind]?.[r];
    return v === undefined ? n : n + (r === 'cpu' ? parseCpuMillis(String(v)) : parseQuantity(String(v)));
  }, 0);
  const pct = (v: number, r: string) => {
    const cap = alloc[r] === undefined ? 0 : r === 'cpu' ? parseCpuMillis(String(alloc[r])) : parseQuantity(String(alloc[r]));
    return cap > 0 ? Math.trunc((v * 100) / cap) : 0;
  };
  const show = (v: number, r: string) => `${v === 0 ? '0' : r === 'cpu' ? `${v}m` : String(v)} (${pct(v, r)}%)`;
  w.write(LEVEL_0, 'Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n');
  w.write(LEVEL_1, 'Resource\tRequests\tLimits\n');
  w.write(LEVEL_1, '--------\t--------\t------\n');
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) w.write(LEVEL_1, `${r}\t${show(total('requests', r), r)}\t${show(total('limits', r), r)}\n`);
}
