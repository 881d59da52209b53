/**
 * `mkctl trace daemonset/x` and `mkctl trace statefulset/x`, pure: a DaemonSet is one pod per
 * eligible node, so the trace names each node lacking its pod and why (not eligible: selector,
 * affinity, taint; eligible: pod missing, unscheduled, not Ready, old revision). A StatefulSet
 * moves one ordinal at a time, so the trace names the ordinal that holds the rollout and why.
 */
import { daemonPodFitsNode } from '../selectors/node-selector.js';
import type { Node, Pod, PodSpec } from '../types.js';
import type * as apps from 'kubernetes-types/apps/v1.js';
import type { Link } from './link.js';

const ready = (p: Pod) => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const owned = (pods: Pod[], uid: string | undefined) => pods.filter((p) => p.metadata?.ownerReferences?.some((o) => o.controller && o.uid === uid));
const pinnedNode = (p: Pod): string | undefined => p.spec?.nodeName
  ?? p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchFields?.find((f) => f.key === 'metadata.name')?.values?.[0];
const scheduledMessage = (p: Pod) => (p.status?.conditions ?? []).find((c) => c.type === 'PodScheduled' && c.status === 'False')?.message;
const waitingReason = (p: Pod) => (p.status?.containerStatuses ?? []).map((c) => c.state?.waiting?.reason).find(Boolean);

function podLink(step: string, p: Pod, upToDate: boolean): Link {
  const name = p.metadata?.name ?? '';
  if (p.metadata?.deletionTimestamp) return { step, status: 'waiting', evidence: `pod ${name} is terminating`, owner: 'kubelet' };
  if (!p.spec?.nodeName) return { step, status: 'waiting', evidence: `pod ${name} is not scheduled${scheduledMessage(p) ? `: ${scheduledMessage(p)}` : ''}`, owner: 'scheduler', hint: `mkctl describe pod ${name}` };
  if (!ready(p)) {
    const why = waitingReason(p);
    return { step, status: why && /BackOff|Err/.test(why) ? 'broken' : 'waiting', evidence: `pod ${name} ${p.status?.phase ?? 'Pending'}, not Ready${why ? ` (${why})` : ''}`, owner: 'kubelet', hint: `mkctl describe pod ${name}` };
  }
  if (!upToDate) return { step, status: 'waiting', evidence: `pod ${name} Ready at an old revision: the rolling update has not reached it yet`, owner: 'controller-manager (daemonset)' };
  return { step, status: 'ok', evidence: `pod ${name} Running and Ready` };
}

export function diagnoseDaemonSet(ds: apps.DaemonSet, nodes: Node[], pods: Pod[]): Link[] {
  const links: Link[] = [];
  const m = ds.metadata ?? {};
  const s: apps.DaemonSetStatus = ds.status ?? { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 };
  const observed = (s.observedGeneration ?? 0) >= (m.generation ?? 0);
  links.push({ step: 'stored', status: observed ? 'ok' : 'waiting', evidence: `daemonset ${m.name} generation ${m.generation ?? 0}, observed ${s.observedGeneration ?? 0}: desired ${s.desiredNumberScheduled ?? 0}, ready ${s.numberReady ?? 0}, up-to-date ${s.updatedNumberScheduled ?? 0}`, ...(observed ? {} : { owner: 'controller-manager (daemonset)' }) });
  const mine = owned(pods, m.uid);
  const hashes = new Set(mine.map((p) => p.metadata?.labels?.['controller-revision-hash']));
  // The newest revision's hash is the one on the most recently created pod at the current template generation.
  const gen = m.annotations?.['deprecated.daemonset.template.generation'];
  for (const n of [...nodes].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))) {
    const name = n.metadata?.name ?? '';
    const step = `node ${name}`;
    const fit = daemonPodFitsNode(ds.spec?.template?.spec as PodSpec | undefined, n);
    const here = mine.filter((p) => pinnedNode(p) === name);
    if (!fit.shouldRun) {
      if (here.length && fit.shouldContinueRunning) links.push({ step, status: 'info', evidence: `not eligible for new pods (${fit.unfit?.message}); its running pod ${here[0]!.metadata?.name} may stay` });
      else if (here.length) links.push({ step, status: 'waiting', evidence: `not eligible (${fit.unfit?.message}): pod ${here[0]!.metadata?.name} is to be deleted`, owner: 'controller-manager (daemonset)' });
      else links.push({ step, status: 'info', evidence: `no pod, as intended: ${fit.unfit?.reason} — ${fit.unfit?.message}` });
      continue;
    }
    if (here.length === 0) {
      links.push({ step, status: 'broken', evidence: 'eligible node lacks its daemon pod', owner: 'controller-manager (daemonset)', hint: `mkctl describe ds ${m.name}; mkctl get events --field-selector involvedObject.name=${m.name}` });
      continue;
    }
    const p = here.find((x) => !x.metadata?.deletionTimestamp) ?? here[0]!;
    const upToDate = gen === undefined || p.metadata?.labels?.['pod-template-generation'] === gen || hashes.size <= 1;
    links.push(podLink(step, p, upToDate));
  }
  return links;
}

const ordinalOf = (set: string, pod: string): number => {
  const rest = pod.startsWith(`${set}-`) ? pod.slice(set.length + 1) : '';
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
};

export function diagnoseStatefulSet(sts: apps.StatefulSet, pods: Pod[]): Link[] {
  const links: Link[] = [];
  const m = sts.metadata ?? {};
  const s: apps.StatefulSetStatus = sts.status ?? { replicas: 0 };
  const name = m.name ?? '';
  const replicas = sts.spec?.replicas ?? 1;
  const start = sts.spec?.ordinals?.start ?? 0;
  const partition = sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
  const ordered = sts.spec?.podManagementPolicy !== 'Parallel';
  links.push({ step: 'stored', status: (s.observedGeneration ?? 0) >= (m.generation ?? 0) ? 'ok' : 'waiting',
    evidence: `statefulset ${name}: ${s.readyReplicas ?? 0}/${replicas} ready, ${s.updatedReplicas ?? 0} at ${s.updateRevision ?? '?'} (current ${s.currentRevision ?? '?'}), ${ordered ? 'OrderedReady' : 'Parallel'}, partition ${partition}` });
  const mine = new Map(owned(pods, m.uid).map((p) => [ordinalOf(name, p.metadata?.name ?? ''), p]));
  let blocked = false;
  for (let ord = start; ord < start + replicas; ord++) {
    const step = `ordinal ${ord}`;
    const p = mine.get(ord);
    if (!p) {
      links.push(blocked ? { step, status: 'info', evidence: `${name}-${ord} not created yet: OrderedReady waits for the lower ordinal` }
        : { step, status: 'broken', evidence: `${name}-${ord} is missing`, owner: 'controller-manager (statefulset)', hint: `mkctl describe sts ${name}` });
      blocked ||= ordered;
      continue;
    }
    const upToDate = ord - start < partition || p.metadata?.labels?.['controller-revision-hash'] === s.updateRevision;
    const link = podLink(step, p, upToDate);
    if (!upToDate) link.evidence = `${p.metadata?.name} at ${p.metadata?.labels?.['controller-revision-hash']}, update revision ${s.updateRevision}: replaced highest ordinal first once the ones above are Ready`;
    if (link.status !== 'ok' && ordered && !blocked) link.evidence += ' — this ordinal holds the rollout';
    links.push(link);
    if (link.status !== 'ok') blocked ||= ordered;
  }
  for (const [ord, p] of mine) {
    if (ord >= start && ord < start + replicas) continue;
    links.push({ step: `ordinal ${ord}`, status: 'waiting', evidence: `${p.metadata?.name} is above replicas ${replicas}: scale-down removes it (highest first)`, owner: 'controller-manager (statefulset)' });
  }
  return links;
}
