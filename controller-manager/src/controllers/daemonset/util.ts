/**
 * The DaemonSet controller's decisions, pure (upstream pkg/controller/daemon: daemon_controller.go
 * podsShouldBeOnNode / NodeShouldRunDaemonPod / updateDaemonSetStatus, update.go rollingUpdate,
 * util/daemonset_util.go). Nothing here reads or writes the API.
 */
import { daemonPodFitsNode, daemonPodTolerations, type DaemonPodFit, type DaemonSet, type Node, type Pod, type PodSpec, type DaemonSetStatus } from '@mk8s/api';
import { isPodAvailable, isPodReady } from '../../util/pods.js';
import { scaledValue } from '../../util/intstr.js';
import { CONTROLLER_REVISION_HASH_LABEL } from '../../util/history.js';
import { clone, type Obj } from '../../util/meta.js';
import type { DeepReadonly } from '@mk8s/client';

export type DSObj = Obj<DaemonSet>;
export type PodObj = Obj<Pod>;
export type NodeObj = Obj<Node>;
type RO<T> = DeepReadonly<T> | T;

/** The label with the DaemonSet's template generation on its pods (extensions/v1beta1 legacy, still set). */
export const POD_TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

export { daemonPodTolerations, type NodeUnfitReason } from '@mk8s/api';

/** NodeShouldRunDaemonPod for ds's template (see daemonPodFitsNode in @mk8s/api). */
export function nodeShouldRunDaemonPod(node: RO<NodeObj>, ds: RO<DSObj>): DaemonPodFit {
  return daemonPodFitsNode(ds.spec?.template?.spec as PodSpec | undefined, node as Node);
}

/** GetTargetNodeName: spec.nodeName, or the node the matchFields affinity pins an unscheduled pod to. */
export function targetNodeName(pod: RO<PodObj>): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const t of terms) for (const f of t.matchFields ?? []) {
    if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
  }
  return undefined;
}

/** ReplaceDaemonSetPodNodeNameNodeAffinity: the required affinity becomes exactly `metadata.name In [node]`. */
export function pinToNode(spec: PodSpec, nodeName: string): PodSpec {
  const term = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] };
  const affinity = spec.affinity ?? {};
  const nodeAffinity = affinity.nodeAffinity ?? {};
  return { ...spec, affinity: { ...affinity, nodeAffinity: { ...nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } } } };
}

/** GetTemplateGeneration: from the deprecated annotation. */
export function templateGeneration(ds: RO<DSObj>): number | undefined {
  const v = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  const n = v === undefined ? NaN : Number(v);
  return Number.isInteger(n) ? n : undefined;
}

/** IsPodUpdated: the pod carries the current hash (or the current template generation). */
export function isPodUpdated(pod: RO<PodObj>, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  return (hash !== '' && labels[CONTROLLER_REVISION_HASH_LABEL] === hash) || (generation !== undefined && labels[POD_TEMPLATE_GENERATION_LABEL] === String(generation));
}

const created = (p: RO<PodObj>): number => Date.parse(p.metadata.creationTimestamp ?? '') || 0;
/** podByCreationTimestampAndPhase: running before others, then oldest first, then by name. */
export function sortDaemonPods<T extends RO<PodObj>>(pods: readonly T[]): T[] {
  return [...pods].sort((a, b) => {
    const ra = a.status?.phase === 'Running' ? 0 : 1, rb = b.status?.phase === 'Running' ? 0 : 1;
    return ra - rb || created(a) - created(b) || a.metadata.name.localeCompare(b.metadata.name);
  });
}

export interface NodePlan {
  /** Nodes that need a daemon pod created. */
  create: string[];
  /** Names of pods to delete. */
  delete: string[];
}

/**
 * manage(): for every node, create the missing pod or delete the pods that should not be there
 * (failed ones, extras beyond one, or beyond one old + one new when surging; all of them on a node
 * that no longer fits). Pods pinned to nodes that no longer exist are deleted too.
 */
export function planNodes(ds: RO<DSObj>, nodes: readonly RO<NodeObj>[], nodeToPods: ReadonlyMap<string, readonly RO<PodObj>[]>, hash: string, now: number): NodePlan {
  const plan: NodePlan = { create: [], delete: [] };
  const surge = allowsSurge(ds);
  const mrs = ds.spec?.minReadySeconds ?? 0;
  const known = new Set<string>();
  for (const node of nodes) {
    known.add(node.metadata.name);
    const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
    const pods = nodeToPods.get(node.metadata.name) ?? [];
    if (shouldRun && pods.length === 0) { plan.create.push(node.metadata.name); continue; }
    if (shouldContinueRunning) {
      const running: RO<PodObj>[] = [];
      for (const p of pods) {
        if (p.metadata.deletionTimestamp) continue;
        if (p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded') plan.delete.push(p.metadata.name);
        else running.push(p);
      }
      if (running.length <= 1) continue;
      const sorted = sortDaemonPods(running);
      if (!surge) { for (const p of sorted.slice(1)) plan.delete.push(p.metadata.name); continue; }
      let oldestNew: RO<PodObj> | undefined, oldestOld: RO<PodObj> | undefined;
      for (const p of sorted) {
        if (p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash) { if (!oldestNew) { oldestNew = p; continue; } }
        else if (!oldestOld) { oldestOld = p; continue; }
        plan.delete.push(p.metadata.name);
      }
      if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isPodAvailable(oldestNew, mrs, now))) plan.delete.push(oldestOld.metadata.name);
      continue;
    }
    for (const p of pods) if (!p.metadata.deletionTimestamp) plan.delete.push(p.metadata.name);
  }
  for (const [nodeName, pods] of nodeToPods) {
    if (known.has(nodeName)) continue;
    for (const p of pods) if (!p.metadata.deletionTimestamp) plan.delete.push(p.metadata.name);
  }
  return plan;
}

export function allowsSurge(ds: RO<DSObj>): boolean {
  const ru = ds.spec?.updateStrategy?.type === 'RollingUpdate' ? ds.spec.updateStrategy.rollingUpdate : undefined;
  return !!ru && scaledValue(ru.maxSurge as number | string | undefined, 1, true) > 0;
}

/** updatedDesiredNodeCounts: maxSurge and maxUnavailable against the nodes that should run the pod (rounded up; both 0 → unavailable 1). */
export function desiredNodeCounts(ds: RO<DSObj>, nodes: readonly RO<NodeObj>[]): { desired: number; maxSurge: number; maxUnavailable: number } {
  const desired = nodes.filter((n) => nodeShouldRunDaemonPod(n, ds).shouldRun).length;
  const ru = ds.spec?.updateStrategy?.rollingUpdate;
  const maxSurge = scaledValue((ru?.maxSurge ?? 0) as number | string, desired, true);
  let maxUnavailable = scaledValue((ru?.maxUnavailable ?? 1) as number | string, desired, true);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { desired, maxSurge, maxUnavailable };
}

/** findUpdatedPodsOnNode: the one new and one old live pod of a node; ok false with more of either. */
export function findUpdatedPodsOnNode(pods: readonly RO<PodObj>[], hash: string, generation: number | undefined): { newPod?: RO<PodObj>; oldPod?: RO<PodObj>; ok: boolean } {
  let newPod: RO<PodObj> | undefined, oldPod: RO<PodObj> | undefined;
  for (const p of pods) {
    if (p.metadata.deletionTimestamp) continue;
    if (isPodUpdated(p, hash, generation)) { if (newPod) return { ok: false }; newPod = p; }
    else { if (oldPod) return { ok: false }; oldPod = p; }
  }
  return { ...(newPod ? { newPod } : {}), ...(oldPod ? { oldPod } : {}), ok: true };
}

/**
 * rollingUpdate (update.go): without surge, delete old pods while fewer than maxUnavailable are
 * unavailable (unavailable old pods are replaced at once); with surge, create new pods next to
 * old ones (up to maxSurge in flight) and delete an old pod once its replacement is available.
 */
export function planRollingUpdate(ds: RO<DSObj>, nodes: readonly RO<NodeObj>[], nodeToPods: ReadonlyMap<string, readonly RO<PodObj>[]>, hash: string, now: number): NodePlan {
  const { maxSurge, maxUnavailable } = desiredNodeCounts(ds, nodes);
  const gen = templateGeneration(ds);
  const mrs = ds.spec?.minReadySeconds ?? 0;
  const entries = [...nodeToPods.entries()].sort(([a], [b]) => a.localeCompare(b));
  if (maxSurge === 0) {
    let unavailable = 0;
    const replace: string[] = [], candidates: string[] = [];
    for (const [, pods] of entries) {
      const { newPod, oldPod, ok } = findUpdatedPodsOnNode(pods, hash, gen);
      if (!ok || (!oldPod && !newPod) || (oldPod && newPod)) { unavailable++; continue; }
      if (newPod) { if (!isPodAvailable(newPod, mrs, now)) unavailable++; continue; }
      if (!isPodAvailable(oldPod!, mrs, now)) replace.push(oldPod!.metadata.name);
      else if (unavailable < maxUnavailable) candidates.push(oldPod!.metadata.name);
    }
    const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    return { create: [], delete: [...replace, ...candidates.slice(0, room)] };
  }
  const del: string[] = [], allowedNew: string[] = [], candidateNew: string[] = [];
  let surging = 0;
  for (const [nodeName, pods] of entries) {
    const { newPod, oldPod, ok } = findUpdatedPodsOnNode(pods, hash, gen);
    if (!ok) { surging++; continue; }
    if (!oldPod) continue;
    if (!newPod) {
      if (!isPodAvailable(oldPod, mrs, now)) allowedNew.push(nodeName);
      else if (surging < maxSurge) candidateNew.push(nodeName);
      continue;
    }
    if (!isPodAvailable(newPod, mrs, now)) { surging++; continue; }
    del.push(oldPod.metadata.name);
  }
  const room = Math.min(Math.max(0, maxSurge - surging), candidateNew.length);
  return { create: [...allowedNew, ...candidateNew.slice(0, room)], delete: del };
}

/** updateDaemonSetStatus's counts. */
export function computeStatus(ds: RO<DSObj>, nodes: readonly RO<NodeObj>[], nodeToPods: ReadonlyMap<string, readonly RO<PodObj>[]>, hash: string, now: number): DaemonSetStatus {
  let desired = 0, current = 0, misscheduled = 0, ready = 0, available = 0, updated = 0;
  const gen = templateGeneration(ds);
  const mrs = ds.spec?.minReadySeconds ?? 0;
  for (const node of nodes) {
    const { shouldRun } = nodeShouldRunDaemonPod(node, ds);
    const pods = nodeToPods.get(node.metadata.name) ?? [];
    if (!shouldRun) { if (pods.length > 0) misscheduled++; continue; }
    desired++;
    if (pods.length === 0) continue;
    current++;
    const pod = sortDaemonPods(pods)[0]!;
    if (isPodReady(pod)) { ready++; if (isPodAvailable(pod, mrs, now)) available++; }
    if (isPodUpdated(pod, hash, gen)) updated++;
  }
  const s: DaemonSetStatus = {
    currentNumberScheduled: current, numberMisscheduled: misscheduled, desiredNumberScheduled: desired, numberReady: ready,
    observedGeneration: ds.metadata.generation ?? 0, updatedNumberScheduled: updated, numberAvailable: available,
  };
  if (desired - available > 0) s.numberUnavailable = desired - available;
  if (ds.status?.collisionCount !== undefined) s.collisionCount = ds.status.collisionCount;
  if (ds.status?.conditions) s.conditions = clone(ds.status.conditions) as never;
  return s;
}
