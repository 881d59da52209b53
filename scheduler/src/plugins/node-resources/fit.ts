import type { FilterPlugin, PluginFactory, PreFilterPlugin, ScorePlugin } from '../../framework/interfaces.js';
import { MAX_NODE_SCORE } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import { PodInfo, type CycleState, type NodeInfo, type Pod } from '../../framework/types.js';

export const NAME = 'NodeResourcesFit';
const STATE_KEY = `PreFilter${NAME}`;

export type ScoringStrategy = 'LeastAllocated' | 'MostAllocated';
/** Scored resources and their weights (args.scoringStrategy.resources). */
export interface ResourceSpec { name: string; weight: number }
export const DEFAULT_RESOURCES: readonly ResourceSpec[] = [{ name: 'cpu', weight: 1 }, { name: 'memory', weight: 1 }];

export interface InsufficientResource { resourceName: string; reason: string; requested: number; used: number; capacity: number }

/**
 * What the node lacks for the pod's requests against allocatable minus what bound and assumed pods
 * already request (noderesources.fitsRequest). Empty = fits.
 */
export function fitsRequest(pi: PodInfo, nodeInfo: NodeInfo): InsufficientResource[] {
  const out: InsufficientResource[] = [];
  const alloc = nodeInfo.allocatable; const used = nodeInfo.requested; const req = pi.requests;
  if (nodeInfo.pods.length + 1 > alloc.allowedPodNumber) {
    out.push({ resourceName: 'pods', reason: 'Too many pods', requested: 1, used: nodeInfo.pods.length, capacity: alloc.allowedPodNumber });
  }
  if (req.milliCpu === 0 && req.memory === 0 && req.ephemeralStorage === 0 && Object.keys(req.scalar).length === 0) return out;
  if (req.milliCpu > 0 && req.milliCpu > alloc.milliCpu - used.milliCpu) {
    out.push({ resourceName: 'cpu', reason: 'Insufficient cpu', requested: req.milliCpu, used: used.milliCpu, capacity: alloc.milliCpu });
  }
  if (req.memory > 0 && req.memory > alloc.memory - used.memory) {
    out.push({ resourceName: 'memory', reason: 'Insufficient memory', requested: req.memory, used: used.memory, capacity: alloc.memory });
  }
  if (req.ephemeralStorage > 0 && req.ephemeralStorage > alloc.ephemeralStorage - used.ephemeralStorage) {
    out.push({ resourceName: 'ephemeral-storage', reason: 'Insufficient ephemeral-storage', requested: req.ephemeralStorage, used: used.ephemeralStorage, capacity: alloc.ephemeralStorage });
  }
  for (const [name, q] of Object.entries(req.scalar)) {
    if (q === 0) continue;
    const a = alloc.scalar[name] ?? 0; const u = used.scalar[name] ?? 0;
    if (q > a - u) out.push({ resourceName: name, reason: `Insufficient ${name}`, requested: q, used: u, capacity: a });
  }
  return out;
}

/** ((capacity - requested) * 100) / capacity, integer, 0 when over capacity. */
export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}
export function mostRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0) return 0;
  return Math.trunc((Math.min(requested, capacity) * MAX_NODE_SCORE) / capacity);
}

/** Allocatable of one resource for scoring; 0 for an extended resource the pod does not use (it does not count). */
export function allocatableFor(nodeInfo: NodeInfo, pi: PodInfo, resource: string): number {
  switch (resource) {
    case 'cpu': return nodeInfo.allocatable.milliCpu;
    case 'memory': return nodeInfo.allocatable.memory;
    case 'ephemeral-storage': return nodeInfo.allocatable.ephemeralStorage;
    default: return (pi.requests.scalar[resource] ?? 0) === 0 ? 0 : nodeInfo.allocatable.scalar[resource] ?? 0;
  }
}

/** Requested-with-pod of one resource, scoring flavour (non-zero defaults for cpu/memory unless useRequested). */
export function requestedWith(nodeInfo: NodeInfo, pi: PodInfo, resource: string, useRequested: boolean): number {
  switch (resource) {
    case 'cpu': return useRequested ? nodeInfo.requested.milliCpu + pi.requests.milliCpu : nodeInfo.nonZeroRequested.milliCpu + pi.nonZero.milliCpu;
    case 'memory': return useRequested ? nodeInfo.requested.memory + pi.requests.memory : nodeInfo.nonZeroRequested.memory + pi.nonZero.memory;
    case 'ephemeral-storage': return nodeInfo.requested.ephemeralStorage + pi.requests.ephemeralStorage;
    default: {
      const want = pi.requests.scalar[resource] ?? 0;
      return want === 0 ? 0 : (nodeInfo.requested.scalar[resource] ?? 0) + want;
    }
  }
}

/** Allocatable and requested-with-pod of one resource, scoring flavour (non-zero defaults for cpu/memory). */
export function allocatableAndRequested(nodeInfo: NodeInfo, pi: PodInfo, resource: string, useRequested: boolean): [number, number] {
  return [allocatableFor(nodeInfo, pi, resource), requestedWith(nodeInfo, pi, resource, useRequested)];
}

/**
 * True when the pod certainly fits (the common case), without building the list fitsRequest
 * returns: the filter runs on hundreds of nodes per cycle.
 */
function fitsQuickly(pi: PodInfo, nodeInfo: NodeInfo): boolean {
  const alloc = nodeInfo.allocatable; const used = nodeInfo.requested; const req = pi.requests;
  return nodeInfo.pods.length + 1 <= alloc.allowedPodNumber
    && (req.milliCpu === 0 || req.milliCpu <= alloc.milliCpu - used.milliCpu)
    && (req.memory === 0 || req.memory <= alloc.memory - used.memory)
    && (req.ephemeralStorage === 0 || req.ephemeralStorage <= alloc.ephemeralStorage - used.ephemeralStorage)
    && pi.scalarResources.length === 0;
}

export interface FitArgs { scoringStrategy?: { type?: ScoringStrategy; resources?: ResourceSpec[] } }

/**
 * Filter: the pod's requests fit in allocatable minus bound and assumed pods, and pods < allocatable
 * pods. Score: LeastAllocated (default) or MostAllocated over cpu and memory.
 */
export class NodeResourcesFit implements PreFilterPlugin, FilterPlugin, ScorePlugin {
  readonly name = NAME;
  private readonly strategy: ScoringStrategy;
  private readonly resources: readonly ResourceSpec[];
  constructor(args: FitArgs = {}) {
    this.strategy = args.scoringStrategy?.type ?? 'LeastAllocated';
    this.resources = args.scoringStrategy?.resources ?? DEFAULT_RESOURCES;
  }
  private podInfo(state: CycleState, pod: Pod): PodInfo {
    let pi = state.read<PodInfo>(STATE_KEY);
    if (!pi || pi.pod !== pod) { pi = PodInfo.of(pod); state.write(STATE_KEY, pi); }
    return pi;
  }
  preFilter(state: CycleState, pod: Pod): Status | undefined {
    state.write(STATE_KEY, PodInfo.of(pod));
    return undefined;
  }
  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const pi = this.podInfo(state, pod);
    if (fitsQuickly(pi, nodeInfo)) return undefined;
    const insufficient = fitsRequest(pi, nodeInfo);
    return insufficient.length ? Status.unschedulable(...insufficient.map((r) => r.reason)) : undefined;
  }
  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number {
    const pi = this.podInfo(state, pod);
    let score = 0; let weightSum = 0;
    for (const r of this.resources) {
      const alloc = allocatableFor(nodeInfo, pi, r.name);
      if (alloc === 0) continue;
      const req = requestedWith(nodeInfo, pi, r.name, false);
      score += (this.strategy === 'LeastAllocated' ? leastRequestedScore(req, alloc) : mostRequestedScore(req, alloc)) * r.weight;
      weightSum += r.weight;
    }
    return weightSum === 0 ? 0 : Math.trunc(score / weightSum);
  }
}
export const create: PluginFactory = (args) => new NodeResourcesFit((args ?? {}) as FitArgs);
