/**
 * `mkctl trace`: the seeds' debugging method as pure functions. Given the objects fetched for a
 * Deployment, ReplicaSet, Pod or Service (and, per node, what kube-proxy programmed), walk the
 * chain stored → children → scheduled → node alive → image → started → ready → endpoints →
 * kube-proxy rules, one Link per step with its time and evidence, and stop at the first broken
 * link, naming the component that owns it and what to look at.
 */
import type * as core from 'kubernetes-types/core/v1.js';
import type * as apps from 'kubernetes-types/apps/v1.js';
import type * as discovery from 'kubernetes-types/discovery/v1.js';
import { dnsProblem, type DnsProbe } from './dns.js';
import type { Link, ProxyEvidence } from './link.js';

export interface TraceInput {
  kind: 'Deployment' | 'ReplicaSet' | 'Pod' | 'Service' | 'PersistentVolumeClaim';
  name: string;
  namespace: string;
  deployment?: apps.Deployment;
  replicaSets?: apps.ReplicaSet[];
  pods?: core.Pod[];
  services?: core.Service[];
  endpointSlices?: discovery.EndpointSlice[];
  nodes?: core.Node[];
  events?: core.Event[];
  configMaps?: string[];
  secrets?: string[];
  /** Per node, for the Service(s) in the chain; undefined when rules could not be read. */
  proxy?: Record<string, ProxyEvidence[]>;
  /** Per node, the Service's name looked up from that node (absent: not checked). */
  dns?: Record<string, DnsProbe[]>;
  /** Why `proxy` / `dns` are absent, as the info link says it (default: mkctl not run as root). */
  proxyNotRead?: string;
  dnsNotRead?: string;
  /** The object itself (Pod or Service), when it is the target. */
  pod?: core.Pod;
  service?: core.Service;
  replicaSet?: apps.ReplicaSet;
  /** Claims of the namespace and every PV: the storage links (claim → volume → node → mounted). */
  claims?: core.PersistentVolumeClaim[];
  volumes?: core.PersistentVolume[];
  claim?: core.PersistentVolumeClaim;
}

/** The node-local evidence (iptables in the node netns, DNS from the node) needs root on the machine that runs the nodes. */
const AS_ROOT = '(run as root on the machine that runs the nodes)';

type Meta = { metadata?: { uid?: string; resourceVersion?: string; creationTimestamp?: string; name?: string; ownerReferences?: { uid: string; controller?: boolean }[] } };

const stored = (kind: string, o: Meta): Link => ({
  step: 'stored', status: 'ok', ...(o.metadata?.creationTimestamp ? { time: o.metadata.creationTimestamp } : {}),
  evidence: `${kind}/${o.metadata?.name ?? ''} uid=${o.metadata?.uid ?? '?'} resourceVersion=${o.metadata?.resourceVersion ?? '?'}`,
});

const ownedBy = (o: Meta, owner: Meta) => !!o.metadata?.ownerReferences?.some((r) => r.uid === owner.metadata?.uid && r.controller !== false);

/**
 * The Events of one object, oldest first. Indexed once per events array (a chain asks for each
 * pod's Events in every check: without it, pods × events). The memo is keyed by the caller's
 * array and dropped at the start of each diagnose(), so an array changed in between is re-read.
 */
const eventIndex = new WeakMap<readonly core.Event[], Map<string, core.Event[]>>();
function eventsFor(events: core.Event[] | undefined, kind: string, name: string): core.Event[] {
  if (!events) return [];
  let idx = eventIndex.get(events);
  if (!idx) {
    idx = new Map();
    for (const e of events) {
      const k = `${e.involvedObject.kind ?? ''}/${e.involvedObject.name ?? ''}`;
      const xs = idx.get(k);
      if (xs) xs.push(e); else idx.set(k, [e]);
    }
    for (const xs of idx.values()) xs.sort((a, b) => evTime(a) - evTime(b));
    eventIndex.set(events, idx);
  }
  return [...(idx.get(`${kind}/${name}`) ?? [])];
}
const evTime = (e: core.Event) => Date.parse(e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata?.creationTimestamp || '') || 0;
const evIso = (e: core.Event | undefined) => (e ? (e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata?.creationTimestamp || undefined) : undefined);
const lastEvent = (evs: core.Event[], reason: string | RegExp) => [...evs].reverse().find((e) => (typeof reason === 'string' ? e.reason === reason : reason.test(e.reason ?? '')));
const withTime = (t: string | undefined | null) => (t ? { time: t } : {});

/**
 * A pod with no container yet may be held by its sandbox or its volumes, which come first in the
 * kubelet (their Events say why): the link names the runtime's (or the volume's) own message.
 */
function sandboxOrVolumes(p: core.Pod, evs: core.Event[]): Link | undefined {
  const name = `${p.metadata?.name ?? ''}`;
  const node = p.spec?.nodeName ?? '';
  if (!(p.status?.containerStatuses ?? []).every((cs) => !cs.containerID)) return undefined;
  const sandbox = lastEvent(evs, 'FailedCreatePodSandBox');
  if (sandbox) {
    return { step: 'sandbox', status: 'broken', ...withTime(evIso(sandbox)), evidence: `${name}: ${sandbox.message ?? 'the pod sandbox could not be created'}`, owner: `container runtime on ${node} (kubelet → cri-docker → Docker) / CNI: the pod sandbox`, hint: `.mk8s/logs/${node}-cri-docker.log; the pod's securityContext.sysctls, hostPorts and network` };
  }
  const mount = lastEvent(evs, 'FailedMount');
  if (mount) {
    return { step: 'volumes', status: 'broken', ...withTime(evIso(mount)), evidence: `${name}: ${mount.message ?? 'a volume could not be set up'}`, owner: `kubelet on ${node} (volumes)`, hint: `create what the pod's volumes reference in its namespace` };
  }
  return undefined;
}

export function selectorMatches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  const keys = Object.keys(selector ?? {});
  return keys.length > 0 && keys.every((k) => labels?.[k] === selector![k]);
}

const fmtSel = (s: Record<string, string> | undefined) => Object.entries(s ?? {}).map(([k, v]) => `${k}=${v}`).join(',');

/** The children links for a Deployment: its current ReplicaSet, then that ReplicaSet's pods. */
function deploymentChildren(inp: TraceInput, d: apps.Deployment, links: Link[]): core.Pod[] | undefined {
  const name = d.metadata?.name ?? '';
  const rev = d.metadata?.annotations?.['deployment.kubernetes.io/revision'];
  const owned = (inp.replicaSets ?? []).filter((r) => ownedBy(r, d));
  const current = owned.find((r) => rev !== undefined && r.metadata?.annotations?.['deployment.kubernetes.io/revision'] === rev)
    ?? [...owned].sort((a, b) => String(b.metadata?.creationTimestamp).localeCompare(String(a.metadata?.creationTimestamp)))[0];
  const devs = eventsFor(inp.events, 'Deployment', name);
  if (!current) {
    const failure = d.status?.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
    links.push({
      step: 'replicaset', status: 'broken', evidence: failure ? `no ReplicaSet: ${failure.message ?? failure.reason ?? ''}` : `no ReplicaSet owned by deployment ${name} (observedGeneration ${d.status?.observedGeneration ?? 0} of ${d.metadata?.generation ?? 0})`,
      owner: 'kube-controller-manager (deployment controller)', hint: 'is the controller-manager running? mkctl cluster status; .mk8s/logs/controller-manager.log',
    });
    return undefined;
  }
  const scaled = lastEvent(devs, 'ScalingReplicaSet');
  links.push({ step: 'replicaset', status: 'ok', ...withTime(scaled ? evIso(scaled) : current.metadata?.creationTimestamp), evidence: `replicaset ${current.metadata?.name ?? ''} (revision ${current.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? '?'}, ${current.spec?.replicas ?? 0} desired)` });
  return replicaSetPods(inp, current, links);
}

function replicaSetPods(inp: TraceInput, rs: apps.ReplicaSet, links: Link[]): core.Pod[] | undefined {
  const rsName = rs.metadata?.name ?? '';
  const pods = (inp.pods ?? []).filter((p) => ownedBy(p, rs) && !p.metadata?.deletionTimestamp);
  const want = rs.spec?.replicas ?? 1;
  const revs = eventsFor(inp.events, 'ReplicaSet', rsName);
  if (want > 0 && pods.length === 0) {
    const failed = lastEvent(revs, 'FailedCreate');
    links.push({
      step: 'pods', status: 'broken', ...withTime(evIso(failed)), evidence: failed ? `no pods: ${failed.message ?? ''}` : `replicaset ${rsName} wants ${want} pods and has none`,
      owner: 'kube-controller-manager (replicaset controller)', hint: `mkctl describe rs ${rsName}; .mk8s/logs/controller-manager.log`,
    });
    return undefined;
  }
  if (want === 0) { links.push({ step: 'pods', status: 'info', evidence: `replicaset ${rsName} is scaled to 0` }); return []; }
  const created = lastEvent(revs, 'SuccessfulCreate');
  links.push({ step: 'pods', status: 'ok', ...withTime(evIso(created)), evidence: `${pods.length}/${want} pods: ${pods.map((p) => p.metadata?.name ?? '').join(', ')}` });
  return pods;
}

const cond = (p: core.Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);

/** Checks one link across pods; the first pod that fails it is reported. */
function podLinks(inp: TraceInput, pods: core.Pod[], links: Link[]): boolean {
  const now = (p: core.Pod) => p.metadata?.name ?? '';
  const checks: ((p: core.Pod) => Link)[] = [
    // scheduled
    (p) => {
      if (p.spec?.nodeName) {
        const c = cond(p, 'PodScheduled');
        return { step: 'scheduled', status: 'ok', ...withTime(c?.lastTransitionTime), evidence: `${now(p)} → ${p.spec.nodeName}` };
      }
      const c = cond(p, 'PodScheduled');
      const ev = lastEvent(eventsFor(inp.events, 'Pod', now(p)), 'FailedScheduling');
      if (c?.status === 'False' || ev) {
        return {
          step: 'scheduled', status: 'broken', ...withTime(evIso(ev) ?? c?.lastTransitionTime), evidence: `${now(p)} unschedulable: ${ev?.message ?? c?.message ?? c?.reason ?? ''}`,
          owner: 'kube-scheduler', hint: `compare the pod's nodeSelector/affinity/tolerations (${fmtSel(p.spec?.nodeSelector) || 'none'}) with mkctl get nodes --show-labels and node taints`,
        };
      }
      return { step: 'scheduled', status: 'waiting', evidence: `${now(p)} has no node and no scheduling attempt yet`, owner: 'kube-scheduler', hint: 'is the scheduler running? mkctl cluster status; .mk8s/logs/scheduler.log' };
    },
    // node alive
    (p) => {
      const node = (inp.nodes ?? []).find((n) => n.metadata?.name === p.spec?.nodeName);
      if (!node) return { step: 'node', status: 'broken', evidence: `node ${p.spec?.nodeName ?? ''} of ${now(p)} does not exist`, owner: 'kubelet / node-lifecycle controller', hint: 'mkctl get nodes' };
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status !== 'True') {
        return {
          step: 'node', status: 'broken', ...withTime(ready?.lastTransitionTime), evidence: `node ${node.metadata?.name ?? ''} is NotReady (${ready?.status ?? 'no Ready condition'}: ${ready?.message ?? ready?.reason ?? ''}); last heartbeat ${ready?.lastHeartbeatTime ?? 'never'}`,
          owner: `kubelet on ${node.metadata?.name ?? ''}`, hint: `is the node's kubelet running? mkctl cluster status; .mk8s/logs/${node.metadata?.name ?? ''}-kubelet.log`,
        };
      }
      return { step: 'node', status: 'ok', ...withTime(ready.lastHeartbeatTime), evidence: `node ${node.metadata?.name ?? ''} Ready` };
    },
    // volumes: every claim Bound to a PV that may be on this node, none failing to mount
    (p) => volumesLink(inp, p),
    // image pulled
    (p) => {
      const evs = eventsFor(inp.events, 'Pod', now(p));
      for (const cs of p.status?.containerStatuses ?? []) {
        const w = cs.state?.waiting;
        if (w && ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull'].includes(w.reason ?? '')) {
          const failed = lastEvent(evs, /^Failed$/) && ([...evs].reverse().find((e) => e.reason === 'Failed' && /pull/i.test(e.message ?? '') && !/^Error:/.test(e.message ?? '')) ?? lastEvent(evs, 'Failed'));
          if (w.reason === 'InvalidImageName') {
            return { step: 'image', status: 'broken', ...withTime(evIso(lastEvent(evs, 'InspectFailed'))), evidence: `${now(p)}/${cs.name}: InvalidImageName: ${(w.message ?? '').slice(0, 300)}`, owner: 'the Pod spec (yours): the image is not a valid reference', hint: 'image names are lowercase [registry/]path[:tag][@digest]' };
          }
          return {
            step: 'image', status: 'broken', ...withTime(evIso(failed)), evidence: `${now(p)}/${cs.name}: ${w.reason ?? ''} for ${cs.image}: ${(failed?.message ?? w.message ?? '').slice(0, 300)}`,
            owner: 'container runtime (kubelet → cri-docker → Docker)', hint: `no registry is reachable: the image must exist locally (docker images; build it with images/), or fix the image name`,
          };
        }
      }
      const held = sandboxOrVolumes(p, evs);
      if (held) return held;
      const statuses = p.status?.containerStatuses ?? [];
      if (!statuses.length) return { step: 'image', status: 'waiting', evidence: `${now(p)}: no container status yet`, owner: `kubelet on ${p.spec?.nodeName ?? ''}`, hint: `mkctl describe pod ${now(p)}` };
      const pulled = lastEvent(evs, 'Pulled');
      const present = statuses.every((cs) => cs.imageID || cs.state?.running || cs.state?.terminated || cs.lastState?.terminated || (cs.state?.waiting && cs.state.waiting.reason !== 'ContainerCreating'));
      if (!present && !pulled) return { step: 'image', status: 'waiting', evidence: `${now(p)}: pulling ${statuses.map((c) => c.image).join(', ')}`, owner: 'container runtime', hint: `mkctl describe pod ${now(p)}` };
      return { step: 'image', status: 'ok', ...withTime(evIso(pulled)), evidence: `${statuses.map((c) => c.image).join(', ')}${pulled ? ` (${pulled.message ?? 'pulled'})` : ' present'}` };
    },
    // containers created and started (init containers first, as the kubelet runs them)
    (p) => {
      const evs = eventsFor(inp.events, 'Pod', now(p));
      const node = p.spec?.nodeName ?? '';
      const runtime = `container runtime on ${node} (kubelet → cri-docker → Docker)`;
      /** Who owns an exit: the kernel for OOMKilled, the runtime for a start that failed, else the app. */
      const exitOwner = (reason: string | undefined, init: boolean) =>
        reason === 'OOMKilled' ? 'the kernel (the container exceeded its memory limit: raise resources.limits.memory or use less)'
          : reason === 'StartError' ? `${runtime}: the container's command could not be started`
            : reason === 'ContainerStatusUnknown' ? `${runtime}: the container was removed behind the kubelet's back`
              : `the application in the ${init ? 'init ' : ''}container (kubelet restarts it with back-off)`;
      const msg = (m: string | undefined) => (m ? `: ${m.slice(0, 300)}` : '');
      const statusesOf: [core.ContainerStatus, boolean][] = [
        ...(p.status?.initContainerStatuses ?? []).map((cs) => [cs, true] as [core.ContainerStatus, boolean]),
        ...(p.status?.containerStatuses ?? []).map((cs) => [cs, false] as [core.ContainerStatus, boolean]),
      ];
      for (const [cs, init] of statusesOf) {
        const w = cs.state?.waiting;
        const last = cs.lastState?.terminated;
        const what = `${now(p)}/${init ? 'init ' : ''}${cs.name}`;
        if (w?.reason === 'CrashLoopBackOff' || (w && last && (cs.restartCount ?? 0) > 0)) {
          return {
            step: 'started', status: 'broken', ...withTime(last?.finishedAt), evidence: `${what}: ${w.reason ?? 'waiting'}, last exit code ${last?.exitCode ?? '?'}${last?.reason ? ` (${last.reason})` : ''}${msg(last?.message)}, ${cs.restartCount ?? 0} restarts`,
            owner: exitOwner(last?.reason, init), hint: last?.reason === 'StartError' ? `check command/args of ${cs.name} against the image: mkctl describe pod ${now(p)}` : `mkctl logs ${now(p)} -c ${cs.name} --previous`,
          };
        }
        if (w && ['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError', 'PreStartHookError'].includes(w.reason ?? '')) {
          const missing = missingRefs(inp, p);
          return {
            step: 'started', status: 'broken', ...withTime(evIso(lastEvent(evs, 'Failed'))), evidence: `${what}: ${w.reason ?? ''}: ${w.message ?? ''}${missing.length ? ` (missing ${missing.join(', ')})` : ''}`,
            owner: w.reason === 'CreateContainerConfigError' ? `kubelet on ${node} (the container's config: env, ConfigMaps, Secrets)` : runtime,
            hint: missing.length ? `create ${missing.join(', ')} in namespace ${inp.namespace} (or mark the reference optional)` : w.reason === 'CreateContainerError' ? `the runtime refused the container (an image without a command needs one in the spec): mkctl describe pod ${now(p)}` : `mkctl describe pod ${now(p)}`,
          };
        }
        const t = cs.state?.terminated;
        if (t && t.exitCode !== 0 && (init || p.spec?.restartPolicy !== 'Always')) {
          return { step: 'started', status: 'broken', ...withTime(t.finishedAt), evidence: `${what} exited with code ${t.exitCode} (${t.reason ?? ''})${msg(t.message)}`, owner: exitOwner(t.reason, init), hint: `mkctl logs ${now(p)} -c ${cs.name}` };
        }
      }
      const held = sandboxOrVolumes(p, evs);
      if (held) return held;
      const missing = missingRefs(inp, p);
      const statuses = p.status?.containerStatuses ?? [];
      const running = statuses.filter((c) => c.state?.running);
      if (running.length === statuses.length && statuses.length) {
        const started = running.map((c) => c.state!.running!.startedAt).sort().at(-1);
        return { step: 'started', status: 'ok', ...withTime(started), evidence: `${now(p)}: ${running.map((c) => `${c.name} running${c.restartCount ? ` (${c.restartCount} restarts)` : ''}`).join(', ')}` };
      }
      if (missing.length) return { step: 'started', status: 'broken', evidence: `${now(p)} references missing ${missing.join(', ')}`, owner: `kubelet on ${p.spec?.nodeName ?? ''}`, hint: `create ${missing.join(', ')} in namespace ${inp.namespace}` };
      if (p.status?.phase === 'Succeeded') return { step: 'started', status: 'ok', evidence: `${now(p)} completed` };
      return { step: 'started', status: 'waiting', evidence: `${now(p)}: ${statuses.map((c) => `${c.name} ${c.state?.waiting?.reason ?? 'waiting'}`).join(', ') || 'no containers yet'}`, owner: `kubelet on ${p.spec?.nodeName ?? ''}`, hint: `mkctl describe pod ${now(p)}` };
    },
    // ready
    (p) => {
      const c = cond(p, 'Ready');
      if (c?.status === 'True') {
        const probes = (p.spec?.containers ?? []).filter((x) => x.readinessProbe).length;
        return { step: 'ready', status: 'ok', ...withTime(c.lastTransitionTime), evidence: `${now(p)} Ready${probes ? ` (readiness probe passing on ${probes} container${probes > 1 ? 's' : ''})` : ' (no readiness probe)'}` };
      }
      const evs = eventsFor(inp.events, 'Pod', now(p));
      const unhealthy = lastEvent(evs, 'Unhealthy');
      const probed = (p.spec?.containers ?? []).filter((x) => x.readinessProbe);
      if (probed.length) {
        return {
          step: 'ready', status: 'broken', ...withTime(evIso(unhealthy) ?? c?.lastTransitionTime), evidence: `${now(p)} not Ready: ${unhealthy?.message ?? c?.message ?? 'readiness probe not yet passing'}${unhealthy?.count && unhealthy.count > 1 ? ` (x${unhealthy.count})` : ''}`,
          owner: 'the application (readiness probe, run by the kubelet)', hint: `check the probe (${probed.map((x) => describeProbeTarget(x.readinessProbe!)).join(', ')}) against what the container serves: mkctl describe pod ${now(p)}`,
        };
      }
      return { step: 'ready', status: 'waiting', ...withTime(c?.lastTransitionTime), evidence: `${now(p)} not Ready: ${c?.message ?? c?.reason ?? 'no Ready condition'}`, owner: `kubelet on ${p.spec?.nodeName ?? ''}`, hint: `mkctl describe pod ${now(p)}` };
    },
  ];
  for (const check of checks) {
    let worst: Link | undefined;
    const oks: Link[] = [];
    for (const p of pods) {
      const l = check(p);
      if (l.status === 'broken') { worst = l; break; }
      if (l.status === 'waiting' && !worst) worst = l;
      if (l.status === 'ok') oks.push(l);
    }
    if (worst) { links.push(worst); return false; }
    if (oks.length === 1) links.push(oks[0]!);
    else if (oks.length) {
      const times = oks.map((l) => l.time).filter((t): t is string => !!t).sort();
      links.push({ step: oks[0]!.step, status: 'ok', ...withTime(times.at(-1)), evidence: oks.length > 3 ? `${oks.length} pods: ${oks.slice(0, 3).map((l) => l.evidence).join('; ')}; …` : oks.map((l) => l.evidence).join('; ') });
    }
  }
  return true;
}

function describeProbeTarget(p: core.Probe): string {
  if (p.httpGet) return `http-get :${String(p.httpGet.port)}${p.httpGet.path ?? '/'}`;
  if (p.tcpSocket) return `tcp-socket :${String(p.tcpSocket.port)}`;
  if (p.exec) return `exec ${(p.exec.command ?? []).join(' ')}`;
  return 'probe';
}

/** ConfigMaps/Secrets a pod's env, envFrom or volumes need that do not exist (non-optional). */
export function missingRefs(inp: TraceInput, p: core.Pod): string[] {
  const out = new Set<string>();
  const cms = inp.configMaps; const secrets = inp.secrets;
  for (const c of [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])]) {
    for (const e of c.env ?? []) {
      const cm = e.valueFrom?.configMapKeyRef; const s = e.valueFrom?.secretKeyRef;
      if (cm && !cm.optional && cms && !cms.includes(cm.name ?? '')) out.add(`configmap "${cm.name ?? ''}"`);
      if (s && !s.optional && secrets && !secrets.includes(s.name ?? '')) out.add(`secret "${s.name ?? ''}"`);
    }
    for (const e of c.envFrom ?? []) {
      if (e.configMapRef && !e.configMapRef.optional && cms && !cms.includes(e.configMapRef.name ?? '')) out.add(`configmap "${e.configMapRef.name ?? ''}"`);
      if (e.secretRef && !e.secretRef.optional && secrets && !secrets.includes(e.secretRef.name ?? '')) out.add(`secret "${e.secretRef.name ?? ''}"`);
    }
  }
  for (const v of p.spec?.volumes ?? []) {
    if (v.configMap && !v.configMap.optional && cms && !cms.includes(v.configMap.name ?? '')) out.add(`configmap "${v.configMap.name ?? ''}"`);
    if (v.secret && !v.secret.optional && secrets && !secrets.includes(v.secret.secretName ?? '')) out.add(`secret "${v.secret.secretName ?? ''}"`);
  }
  return [...out];
}

const claimNamesOf = (p: core.Pod) => (p.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : []));
/** The node a PV is pinned to (required kubernetes.io/hostname In [one]), if any. */
export function volumeNode(pv: core.PersistentVolume): string | undefined {
  for (const t of pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []) {
    for (const e of t.matchExpressions ?? []) if (e.key === 'kubernetes.io/hostname' && e.operator === 'In' && e.values?.length === 1) return e.values[0];
  }
  return undefined;
}
const pvPath = (pv: core.PersistentVolume) => pv.spec?.hostPath?.path ?? pv.spec?.local?.path ?? '';

/** Claim → bound PV for one claim: a Link when it is not Bound (broken or waiting), else the PV. */
function claimBinding(inp: TraceInput, c: core.PersistentVolumeClaim): { link?: Link; pv?: core.PersistentVolume } {
  const name = c.metadata?.name ?? '';
  const evs = eventsFor(inp.events, 'PersistentVolumeClaim', name);
  if (c.status?.phase === 'Bound' && c.spec?.volumeName) {
    const pv = (inp.volumes ?? []).find((v) => v.metadata?.name === c.spec!.volumeName);
    if (!pv) return { link: { step: 'claim', status: 'broken', evidence: `claim ${name} is Bound to ${c.spec.volumeName}, which does not exist`, owner: 'kube-controller-manager (persistentvolume-binder)', hint: 'mkctl get pv' } };
    return { pv };
  }
  if (c.status?.phase === 'Lost') return { link: { step: 'claim', status: 'broken', evidence: `claim ${name} is Lost: ${lastEvent(evs, /^Claim/)?.message ?? ''}`, owner: 'kube-controller-manager (persistentvolume-binder)', hint: `mkctl describe pvc ${name}` } };
  const failed = lastEvent(evs, /^(ProvisioningFailed|VolumeMismatch|FailedBinding)$/);
  const last = evs.at(-1);
  if (failed && (failed.type === 'Warning' || failed.reason === 'FailedBinding') && failed === last) {
    return { link: { step: 'claim', status: 'broken', ...withTime(evIso(failed)), evidence: `claim ${name} Pending: ${failed.reason}: ${failed.message ?? ''}`, owner: failed.reason === 'ProvisioningFailed' ? 'the claim\'s StorageClass / its provisioner' : 'kube-controller-manager (persistentvolume-binder)', hint: 'mkctl get storageclass; mkctl get pv' } };
  }
  const cls = c.spec?.storageClassName;
  const why = last ? `${last.reason}: ${last.message ?? ''}` : 'no binding attempt yet';
  return { link: { step: 'claim', status: 'waiting', ...withTime(evIso(last)), evidence: `claim ${name} Pending (class ${cls || 'none'}): ${why}`, owner: last?.reason === 'WaitForFirstConsumer' ? 'kube-scheduler (VolumeBinding picks the node when a pod uses the claim)' : 'kube-controller-manager (persistentvolume-binder / local-path-provisioner)', hint: `mkctl describe pvc ${name}` } };
}

function volumesLink(inp: TraceInput, p: core.Pod): Link {
  const name = p.metadata?.name ?? '';
  const claims = claimNamesOf(p);
  if (!claims.length) return { step: 'volumes', status: 'info', evidence: `${name}: no claims` }; // not shown
  const parts: string[] = [];
  for (const cn of claims) {
    const c = (inp.claims ?? []).find((x) => x.metadata?.name === cn);
    if (!c) return { step: 'volumes', status: 'broken', evidence: `${name} uses claim ${cn}, which does not exist`, owner: 'the pod spec (yours)', hint: `mkctl get pvc -n ${inp.namespace}` };
    const b = claimBinding(inp, c);
    if (b.link) return { ...b.link, step: 'volumes' };
    const node = volumeNode(b.pv!);
    if (node && p.spec?.nodeName && node !== p.spec.nodeName) {
      return { step: 'volumes', status: 'broken', evidence: `claim ${cn} → ${b.pv!.metadata?.name ?? ''} lives on ${node}, the pod is on ${p.spec.nodeName}`, owner: 'kube-scheduler (VolumeBinding)', hint: `mkctl describe pod ${name}` };
    }
    parts.push(`${cn} → ${b.pv!.metadata?.name ?? ''}${node ? ` on ${node}` : ''} (${pvPath(b.pv!)})`);
  }
  const failed = lastEvent(eventsFor(inp.events, 'Pod', name), 'FailedMount');
  const running = (p.status?.containerStatuses ?? []).some((cs) => cs.state?.running || cs.state?.terminated);
  if (failed && !running) return { step: 'volumes', status: 'broken', ...withTime(evIso(failed)), evidence: `${name}: FailedMount: ${failed.message ?? ''}`, owner: `kubelet on ${p.spec?.nodeName ?? ''}`, hint: `mkctl describe pod ${name}` };
  return { step: 'volumes', status: 'ok', evidence: `${name}: ${parts.join('; ')}${running ? ', mounted' : ''}` };
}

/** The chain of a claim: stored → claim bound → volume → node → mounted by its pods. */
function claimChain(inp: TraceInput, c: core.PersistentVolumeClaim, links: Link[]): void {
  const name = c.metadata?.name ?? '';
  const b = claimBinding(inp, c);
  if (b.link) { links.push(b.link); return; }
  const pv = b.pv!;
  links.push({ step: 'claim', status: 'ok', evidence: `claim ${name} Bound to ${pv.metadata?.name ?? ''} (${c.status?.capacity?.['storage'] ?? '?'}, class ${c.spec?.storageClassName || 'none'})` });
  const prov = pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'];
  links.push({ step: 'volume', status: 'ok', ...withTime(pv.metadata?.creationTimestamp), evidence: `${pv.metadata?.name ?? ''} ${pv.status?.phase ?? ''}, ${pv.spec?.persistentVolumeReclaimPolicy ?? ''}, ${pv.spec?.hostPath ? 'hostPath' : pv.spec?.local ? 'local' : 'other'} ${pvPath(pv)}${prov ? `, provisioned by ${prov}` : ''}` });
  const nodeName = volumeNode(pv);
  if (nodeName) {
    const node = (inp.nodes ?? []).find((n) => n.metadata?.name === nodeName);
    const ready = node?.status?.conditions?.find((x) => x.type === 'Ready');
    if (!node || ready?.status !== 'True') {
      links.push({ step: 'node', status: 'broken', evidence: `the volume lives on ${nodeName}, which is ${node ? 'NotReady' : 'gone'}`, owner: `kubelet on ${nodeName}`, hint: 'mkctl get nodes; its data is only on that node' });
      return;
    }
    links.push({ step: 'node', status: 'ok', ...withTime(ready.lastHeartbeatTime), evidence: `node ${nodeName} Ready` });
  } else {
    links.push({ step: 'node', status: 'info', evidence: 'the volume is not pinned to a node' });
  }
  const users = (inp.pods ?? []).filter((p) => claimNamesOf(p).includes(name) && !p.metadata?.deletionTimestamp);
  if (!users.length) { links.push({ step: 'mounted', status: 'info', evidence: 'no pod uses the claim' }); return; }
  for (const p of users) {
    const l = volumesLink(inp, p);
    if (l.status !== 'ok') { links.push({ ...l, step: 'mounted' }); return; }
  }
  links.push({ step: 'mounted', status: 'ok', evidence: users.map((p) => `${p.metadata?.name ?? ''} on ${p.spec?.nodeName ?? '(unscheduled)'} ${p.status?.phase ?? ''}`).join(', ') });
}

/** Endpoints and kube-proxy links for the Services in front of pods. */
function serviceLinks(inp: TraceInput, services: core.Service[], pods: core.Pod[], links: Link[]): boolean {
  for (const svc of services) {
    const sname = svc.metadata?.name ?? '';
    const slices = (inp.endpointSlices ?? []).filter((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === sname);
    const readyAddrs = new Set(slices.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses)));
    const missing = pods.filter((p) => cond(p, 'Ready')?.status === 'True' && p.status?.podIP && !readyAddrs.has(p.status.podIP));
    if (missing.length) {
      return push(links, {
        step: 'endpoints', status: 'broken', evidence: `service ${sname}: ready pod ${missing[0]!.metadata?.name ?? ''} (${missing[0]!.status?.podIP ?? ''}) is not in its EndpointSlices (${slices.length} slices, ${readyAddrs.size} ready addresses)`,
        owner: 'kube-controller-manager (endpointslice controller)', hint: `mkctl get endpointslices -l kubernetes.io/service-name=${sname} -o yaml; .mk8s/logs/controller-manager.log`,
      });
    }
    if (!readyAddrs.size) {
      return push(links, { step: 'endpoints', status: 'broken', evidence: `service ${sname} has no ready endpoints`, owner: 'kube-controller-manager (endpointslice controller)', hint: `mkctl get endpointslices -l kubernetes.io/service-name=${sname}` });
    }
    const sliceTime = slices.map((s) => s.metadata?.creationTimestamp).filter((t): t is string => !!t).sort().at(-1);
    links.push({ step: 'endpoints', status: 'ok', ...withTime(sliceTime), evidence: `service ${sname}: ${[...readyAddrs].slice(0, 5).join(', ')}${readyAddrs.size > 5 ? ', …' : ''}` });
    if (!svc.spec?.clusterIP || svc.spec.clusterIP === 'None') {
      links.push({ step: 'kube-proxy', status: 'info', evidence: `service ${sname} is headless: no proxy rules` });
      if (!dnsLink(inp, svc, readyAddrs, links)) return false;
      continue;
    }
    const perNode = inp.proxy;
    if (!perNode) { links.push({ step: 'kube-proxy', status: 'info', evidence: inp.proxyNotRead ?? `proxy rules not read ${AS_ROOT}` }); continue; }
    const nodes = (inp.nodes ?? []).map((n) => n.metadata?.name ?? '');
    const bad: string[] = []; const good: string[] = [];
    for (const n of nodes) {
      const ev = (perNode[n] ?? []).find((x) => x.detail.includes(`${svc.metadata?.namespace ?? ''}/${sname}`)) ?? (perNode[n] ?? [])[0];
      if (!ev || !ev.present) bad.push(`${n}: ${ev?.detail ?? 'no rules read'}`);
      else if (ev.endpoints < readyAddrs.size) bad.push(`${n}: ${ev.endpoints}/${readyAddrs.size} endpoints programmed`);
      else good.push(`${n} (${ev.endpoints} endpoints)`);
    }
    if (bad.length) {
      return push(links, {
        step: 'kube-proxy', status: 'broken', evidence: `service ${sname} ${svc.spec.clusterIP}: ${bad.join('; ')}`,
        owner: `kube-proxy on ${bad.map((b) => b.split(':')[0]).join(', ')}`, hint: 'mkctl doctor network; .mk8s/logs/<node>-kube-proxy.log',
      });
    }
    links.push({ step: 'kube-proxy', status: 'ok', evidence: `service ${sname} ${svc.spec.clusterIP} → KUBE-SVC rules on ${good.join(', ')}` });
    if (!dnsLink(inp, svc, readyAddrs, links)) return false;
  }
  return true;
}

function push(links: Link[], l: Link): false { links.push(l); return false; }

/** The `dns` link: the Service's name answers its ClusterIP (headless: its ready endpoints) from every node. */
function dnsLink(inp: TraceInput, svc: core.Service, ready: Set<string>, links: Link[]): boolean {
  const sname = svc.metadata?.name ?? '';
  const fqdn = `${sname}.${svc.metadata?.namespace ?? inp.namespace}.svc.cluster.local`;
  if (!inp.dns) { links.push({ step: 'dns', status: 'info', evidence: `${fqdn} ${inp.dnsNotRead ?? `not looked up ${AS_ROOT}`}` }); return true; }
  const headless = svc.spec?.clusterIP === 'None';
  const want = headless ? [...ready] : (svc.spec?.clusterIPs?.length ? svc.spec.clusterIPs : [svc.spec?.clusterIP ?? '']).filter((ip) => !ip.includes(':'));
  const probes = Object.values(inp.dns).flat().filter((p) => p.name === fqdn);
  const bad = probes.map((p) => dnsProblem(p, want)).filter((x): x is string => !!x);
  if (bad.length || probes.length === 0) {
    return push(links, {
      step: 'dns', status: 'broken', evidence: bad.join('; ') || `${fqdn} was not looked up from any node`,
      owner: 'cluster DNS (kube-system/coredns behind kube-dns 10.96.0.10)', hint: 'mkctl -n kube-system get pods -l k8s-app=kube-dns; mkctl doctor network',
    });
  }
  links.push({ step: 'dns', status: 'ok', evidence: `${fqdn} → ${want.join(', ')} from ${probes.map((p) => `${p.node} (${p.ms} ms)`).join(', ')}` });
  return true;
}

/** Walks the chain for the target; the last link is the first broken one, if any. */
export function diagnose(inp: TraceInput): Link[] {
  if (inp.events) eventIndex.delete(inp.events);
  const links: Link[] = [];
  let pods: core.Pod[] | undefined;
  let services: core.Service[] = [];
  if (inp.kind === 'Deployment') {
    const d = inp.deployment!;
    links.push(stored('deployment.apps', d));
    pods = deploymentChildren(inp, d, links);
  } else if (inp.kind === 'ReplicaSet') {
    links.push(stored('replicaset.apps', inp.replicaSet!));
    pods = replicaSetPods(inp, inp.replicaSet!, links);
  } else if (inp.kind === 'Pod') {
    links.push(stored('pod', inp.pod!));
    pods = [inp.pod!];
  } else if (inp.kind === 'PersistentVolumeClaim') {
    links.push(stored('persistentvolumeclaim', inp.claim!));
    claimChain(inp, inp.claim!, links);
    return links;
  } else {
    const svc = inp.service!;
    links.push(stored('service', svc));
    if (!svc.spec?.selector || !Object.keys(svc.spec.selector).length) {
      links.push({ step: 'selector', status: 'info', evidence: `service ${inp.name} has no selector: its endpoints are managed by hand` });
      return links;
    }
    const matched = (inp.pods ?? []).filter((p) => selectorMatches(svc.spec!.selector, p.metadata?.labels) && !p.metadata?.deletionTimestamp);
    if (!matched.length) {
      const labelsSeen = [...new Set((inp.pods ?? []).map((p) => fmtSel(p.metadata?.labels)).filter(Boolean))].slice(0, 3);
      links.push({
        step: 'selector', status: 'broken', evidence: `selector ${fmtSel(svc.spec.selector)} matches no pods in namespace ${inp.namespace}${labelsSeen.length ? ` (pods here are labelled ${labelsSeen.join(' | ')})` : ' (no pods here)'}`,
        owner: 'the Service spec (yours)', hint: `make spec.selector match the pod template labels: mkctl get pods -n ${inp.namespace} --show-labels`,
      });
      return links;
    }
    links.push({ step: 'selector', status: 'ok', evidence: `selector ${fmtSel(svc.spec.selector)} matches ${matched.length} pods: ${matched.slice(0, 5).map((p) => p.metadata?.name ?? '').join(', ')}` });
    pods = matched;
    services = [svc];
  }
  if (!pods) return links;
  if (!pods.length) return links;
  if (!podLinks(inp, pods, links)) return links;
  if (inp.kind !== 'Service') {
    services = (inp.services ?? []).filter((s) => pods!.some((p) => selectorMatches(s.spec?.selector, p.metadata?.labels)));
    if (!services.length) { links.push({ step: 'endpoints', status: 'info', evidence: 'no Service selects these pods (not exposed)' }); return links; }
  }
  serviceLinks(inp, services, pods, links);
  return links;
}
