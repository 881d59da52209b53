/** `describe` for DaemonSets, StatefulSets and PodDisruptionBudgets, after kubectl's describe.go. */
import type * as core from 'kubernetes-types/core/v1.js';
import type * as apps from 'kubernetes-types/apps/v1.js';
import type * as policy from 'kubernetes-types/policy/v1.js';
import { conditionsTable, describePodTemplate } from './describers.js';
import { describeEvents, formatLabelSelector, LEVEL_0, LEVEL_1, LEVEL_2, PrefixWriter, printAnnotationsMultiline, printLabelsMultiline, rfc1123z, type EventLike } from './prefix-writer.js';

const podsStatus = (pods: core.Pod[]): string => {
  const count = (p: string) => pods.filter((x) => x.status?.phase === p).length;
  return `${count('Running')} Running / ${count('Pending')} Waiting / ${count('Succeeded')} Succeeded / ${count('Failed')} Failed`;
};
const owned = (pods: core.Pod[], uid: string | undefined) => pods.filter((p) => p.metadata?.ownerReferences?.some((o) => o.controller && o.uid === uid));

export function describeDaemonSet(ds: apps.DaemonSet, pods: core.Pod[], events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = ds.metadata ?? {};
  const s = ds.status;
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  w.write(LEVEL_0, `Selector:\t${formatLabelSelector(ds.spec?.selector)}\n`);
  const nodeSelector = Object.entries(ds.spec?.template?.spec?.nodeSelector ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
  w.write(LEVEL_0, `Node-Selector:\t${nodeSelector || '<none>'}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, `Desired Number of Nodes Scheduled: ${s?.desiredNumberScheduled ?? 0}\n`);
  w.write(LEVEL_0, `Current Number of Nodes Scheduled: ${s?.currentNumberScheduled ?? 0}\n`);
  w.write(LEVEL_0, `Number of Nodes Scheduled with Up-to-date Pods: ${s?.updatedNumberScheduled ?? 0}\n`);
  w.write(LEVEL_0, `Number of Nodes Scheduled with Available Pods: ${s?.numberAvailable ?? 0}\n`);
  w.write(LEVEL_0, `Number of Nodes Misscheduled: ${s?.numberMisscheduled ?? 0}\n`);
  w.write(LEVEL_0, `Pods Status:\t${podsStatus(owned(pods, m.uid))}\n`);
  describePodTemplate(w, ds.spec?.template);
  if (events) describeEvents(w, events, now);
  return w.toString();
}

export function describeStatefulSet(sts: apps.StatefulSet, pods: core.Pod[], events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = sts.metadata ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  w.write(LEVEL_0, `CreationTimestamp:\t${rfc1123z(m.creationTimestamp)}\n`);
  w.write(LEVEL_0, `Selector:\t${formatLabelSelector(sts.spec?.selector)}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, `Replicas:\t${sts.spec?.replicas ?? 1} desired | ${sts.status?.replicas ?? 0} total\n`);
  const us = sts.spec?.updateStrategy;
  w.write(LEVEL_0, `Update Strategy:\t${us?.type ?? ''}\n`);
  if (us?.rollingUpdate) {
    w.write(LEVEL_1, `Partition:\t${us.rollingUpdate.partition ?? 0}\n`);
    if (us.rollingUpdate.maxUnavailable !== undefined) w.write(LEVEL_1, `MaxUnavailable:\t${String(us.rollingUpdate.maxUnavailable)}\n`);
  }
  w.write(LEVEL_0, `Pods Status:\t${podsStatus(owned(pods, m.uid))}\n`);
  describePodTemplate(w, sts.spec?.template);
  const claims = sts.spec?.volumeClaimTemplates ?? [];
  if (claims.length === 0) w.write(LEVEL_0, 'Volume Claims:\t<none>\n');
  else {
    w.write(LEVEL_0, 'Volume Claims:\n');
    for (const c of claims) {
      w.write(LEVEL_1, `Name:\t${c.metadata?.name ?? ''}\n`);
      w.write(LEVEL_1, `StorageClass:\t${c.spec?.storageClassName ?? ''}\n`);
      w.write(LEVEL_1, `Capacity:\t${c.spec?.resources?.requests?.['storage'] ?? ''}\n`);
      w.write(LEVEL_1, `Access Modes:\t${(c.spec?.accessModes ?? []).join(', ')}\n`);
    }
  }
  conditionsTable(w, sts.status?.conditions);
  if (events) describeEvents(w, events, now);
  return w.toString();
}

export function describePodDisruptionBudget(pdb: policy.PodDisruptionBudget, events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = pdb.metadata ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  if (pdb.spec?.minAvailable !== undefined) w.write(LEVEL_0, `Min available:\t${String(pdb.spec.minAvailable)}\n`);
  if (pdb.spec?.maxUnavailable !== undefined) w.write(LEVEL_0, `Max unavailable:\t${String(pdb.spec.maxUnavailable)}\n`);
  w.write(LEVEL_0, `Selector:\t${pdb.spec?.selector ? formatLabelSelector(pdb.spec.selector) || '<unset>' : '<unset>'}\n`);
  const s = pdb.status;
  w.write(LEVEL_0, 'Status:\n');
  w.write(LEVEL_2, `Allowed disruptions:\t${s?.disruptionsAllowed ?? 0}\n`);
  w.write(LEVEL_2, `Current:\t${s?.currentHealthy ?? 0}\n`);
  w.write(LEVEL_2, `Desired:\t${s?.desiredHealthy ?? 0}\n`);
  w.write(LEVEL_2, `Total:\t${s?.expectedPods ?? 0}\n`);
  if (events) describeEvents(w, events, now);
  return w.toString();
}
