/**
 * Which objects a trace reads, from a generic GET: `mkctl trace` (through its RestClientset) and
 * the dashboard's chain view (through the dashboard's /api proxy with the user's token) gather the
 * same inputs here, then `traceLinks` walks them with the one set of rules (diagnose, workloads,
 * batch). Node-local evidence (iptables in a node's netns, DNS from a node) is not gathered here:
 * mkctl adds it to `input.proxy` / `input.dns` when it can read it.
 */
import type * as core from 'kubernetes-types/core/v1.js';
import type * as apps from 'kubernetes-types/apps/v1.js';
import type * as batch from 'kubernetes-types/batch/v1.js';
import type * as discovery from 'kubernetes-types/discovery/v1.js';
import type * as autoscaling from 'kubernetes-types/autoscaling/v2.js';
import {
  collectionPath, ConfigMaps, CronJobs, DaemonSets, Deployments, EndpointSlices, Events, Jobs, Nodes, PersistentVolumeClaims,
  HorizontalPodAutoscalers, lookupKind, PersistentVolumes, Pods, ReplicaSets, Secrets, Services, StatefulSets, type ResourceDescriptor,
} from '../scheme.js';
import { diagnoseHorizontalPodAutoscaler, type ScaleTargetView } from './hpa.js';
import { diagnose, type TraceInput } from './diagnose.js';
import { diagnoseDaemonSet, diagnoseStatefulSet } from './workloads.js';
import { diagnoseCronJob, diagnoseJob } from './batch.js';
import type { Link } from './link.js';

/**
 * GETs an apiserver path (with its query, e.g. `/api/v1/namespaces/ns/pods?fieldSelector=…`) and
 * resolves to the decoded JSON body. Rejects on a non-2xx answer (with the Status, as the caller's
 * client does); gather lets optional reads (Secrets, claims, volumes) fail, and no other.
 */
export type ApiGet = (path: string) => Promise<unknown>;

/** The kinds a trace follows, in the order `mkctl trace` documents them. */
export const TRACE_KINDS = ['Deployment', 'ReplicaSet', 'Pod', 'Service', 'PersistentVolumeClaim', 'DaemonSet', 'StatefulSet', 'Job', 'CronJob', 'HorizontalPodAutoscaler'] as const;
export type TraceKind = (typeof TRACE_KINDS)[number];
export const isTraceKind = (k: string): k is TraceKind => (TRACE_KINDS as readonly string[]).includes(k);

/** The descriptor of each traced kind: its collection path and its name in messages. */
export const TRACE_RESOURCES: Readonly<Record<TraceKind, ResourceDescriptor>> = {
  Deployment: Deployments, ReplicaSet: ReplicaSets, Pod: Pods, Service: Services, PersistentVolumeClaim: PersistentVolumeClaims,
  DaemonSet: DaemonSets, StatefulSet: StatefulSets, Job: Jobs, CronJob: CronJobs, HorizontalPodAutoscaler: HorizontalPodAutoscalers,
};

export interface TraceTarget { kind: TraceKind; namespace: string; name: string }

/** What was read for a target, by kind; `sources` are the collections to watch to see it change. */
export type TraceGathered = { target: TraceTarget; sources: string[] } & (
  | { kind: 'chain'; input: TraceInput }
  | { kind: 'DaemonSet'; daemonSet: apps.DaemonSet; nodes: core.Node[]; pods: core.Pod[] }
  | { kind: 'StatefulSet'; statefulSet: apps.StatefulSet; pods: core.Pod[] }
  | { kind: 'Job'; job: batch.Job; pods: core.Pod[]; events: core.Event[] }
  | { kind: 'CronJob'; cronJob: batch.CronJob; jobs: batch.Job[]; pods: core.Pod[]; events: core.Event[] }
  | { kind: 'HorizontalPodAutoscaler'; hpa: autoscaling.HorizontalPodAutoscaler; scaleTarget: ScaleTargetView | undefined; events: core.Event[] }
);

const objectPath = (r: ResourceDescriptor, ns: string, name: string) => `${collectionPath(r, ns)}/${encodeURIComponent(name)}`;
const withQuery = (path: string, q: Record<string, string>) => `${path}?${new URLSearchParams(q).toString()}`;

/** Reads the items of a list (an answer without `items` counts as empty). */
async function listAt<T>(get: ApiGet, path: string): Promise<T[]> {
  const body = (await get(path)) as { items?: T[] } | null;
  return body?.items ?? [];
}

/** The target's own collection narrowed to it by name: what to watch to see it appear, change or go. */
export const targetSource = (t: TraceTarget): string =>
  withQuery(collectionPath(TRACE_RESOURCES[t.kind], t.namespace), { fieldSelector: `metadata.name=${t.name}` });

/**
 * Reads what the chain of target needs. The target's own GET comes first, so a missing object
 * rejects with its NotFound before anything else is read. Concurrent reads; no writes.
 */
export async function gatherTrace(get: ApiGet, target: TraceTarget): Promise<TraceGathered> {
  const { kind, namespace: ns, name } = target;
  const self = TRACE_RESOURCES[kind];
  const obj = await get(objectPath(self, ns, name));
  const sources = [targetSource(target)];
  const list = <T>(path: string): Promise<T[]> => { sources.push(path); return listAt<T>(get, path); };
  const at = (r: ResourceDescriptor, q?: Record<string, string>) => (q ? withQuery(collectionPath(r, ns), q) : collectionPath(r, ns));

  if (kind === 'HorizontalPodAutoscaler') {
    const hpa = obj as autoscaling.HorizontalPodAutoscaler;
    const ref = hpa.spec?.scaleTargetRef ?? { kind: '', name: '' };
    const r = lookupKind(ref.apiVersion ?? '', ref.kind);
    // The target (a kind this scheme knows; custom resources read as not found here), then the HPA's events.
    const [t, events] = await Promise.all([
      r ? (get(objectPath(r, ns, ref.name)) as Promise<{ spec?: { replicas?: number }; status?: { replicas?: number } }>).catch(() => undefined) : Promise.resolve(undefined),
      list<core.Event>(at(Events, { fieldSelector: `involvedObject.name=${name}` })),
    ]);
    if (r) sources.push(withQuery(collectionPath(r, ns), { fieldSelector: `metadata.name=${ref.name}` }));
    const scaleTarget = t ? { kind: ref.kind, name: ref.name, ...(t.spec?.replicas !== undefined ? { specReplicas: t.spec.replicas } : {}), ...(t.status?.replicas !== undefined ? { statusReplicas: t.status.replicas } : {}) } : undefined;
    return { target, sources, kind, hpa, scaleTarget, events };
  }
  if (kind === 'Job' || kind === 'CronJob') {
    const byName = { fieldSelector: `involvedObject.name=${name}` };
    const [pods, events] = await Promise.all([list<core.Pod>(at(Pods)), list<core.Event>(at(Events, byName))]);
    if (kind === 'Job') return { target, sources, kind, job: obj as batch.Job, pods, events };
    const jobs = await list<batch.Job>(at(Jobs));
    return { target, sources, kind, cronJob: obj as batch.CronJob, jobs, pods, events };
  }
  if (kind === 'StatefulSet') return { target, sources, kind, statefulSet: obj as apps.StatefulSet, pods: await list<core.Pod>(at(Pods)) };
  if (kind === 'DaemonSet') {
    const [pods, nodes] = await Promise.all([list<core.Pod>(at(Pods)), list<core.Node>(collectionPath(Nodes))]);
    return { target, sources, kind, daemonSet: obj as apps.DaemonSet, nodes, pods };
  }

  const [replicaSets, pods, services, endpointSlices, nodes, events, cms, secrets] = await Promise.all([
    list<apps.ReplicaSet>(at(ReplicaSets)), list<core.Pod>(at(Pods)), list<core.Service>(at(Services)),
    list<discovery.EndpointSlice>(at(EndpointSlices)),
    list<core.Node>(collectionPath(Nodes)), list<core.Event>(at(Events)), list<core.ConfigMap>(at(ConfigMaps)),
    // Secrets may be forbidden to the reader: then missing-Secret checks are skipped, not failed.
    list<core.Secret>(at(Secrets)).catch(() => undefined),
  ]);
  const input: TraceInput = {
    kind, name, namespace: ns, replicaSets, pods, services, endpointSlices, nodes, events,
    configMaps: cms.map((x) => x.metadata?.name ?? ''),
    ...(secrets ? { secrets: secrets.map((x) => x.metadata?.name ?? '') } : {}),
  };
  if (kind === 'Deployment') input.deployment = obj as apps.Deployment;
  if (kind === 'ReplicaSet') input.replicaSet = obj as apps.ReplicaSet;
  if (kind === 'Pod') input.pod = obj as core.Pod;
  if (kind === 'Service') input.service = obj as core.Service;
  if (kind === 'PersistentVolumeClaim') input.claim = obj as core.PersistentVolumeClaim;
  const [claims, volumes] = await Promise.all([
    list<core.PersistentVolumeClaim>(at(PersistentVolumeClaims)).catch(() => []),
    list<core.PersistentVolume>(collectionPath(PersistentVolumes)).catch(() => []),
  ]);
  input.claims = claims; input.volumes = volumes;
  return { target, sources, kind: 'chain', input };
}

/** The Services whose kube-proxy rules and DNS names the chain checks (those with a ClusterIP). */
export function proxiedServices(g: TraceGathered): { namespace: string; name: string }[] {
  if (g.kind !== 'chain') return [];
  return (g.input.services ?? []).filter((s) => s.spec?.clusterIP && s.spec.clusterIP !== 'None')
    .map((s) => ({ namespace: g.target.namespace, name: s.metadata?.name ?? '' }));
}

/** Walks the gathered objects with the trace rules: one Link per step, the first broken one last. */
export function traceLinks(g: TraceGathered): Link[] {
  switch (g.kind) {
    case 'chain': return diagnose(g.input);
    case 'DaemonSet': return diagnoseDaemonSet(g.daemonSet, g.nodes, g.pods);
    case 'StatefulSet': return diagnoseStatefulSet(g.statefulSet, g.pods);
    case 'Job': return diagnoseJob(g.job, g.pods, g.events);
    case 'CronJob': return diagnoseCronJob(g.cronJob, g.jobs, g.pods, g.events);
    case 'HorizontalPodAutoscaler': return diagnoseHorizontalPodAutoscaler(g.hpa, g.scaleTarget, g.events);
  }
}
