import type { PluginFactory, PreScorePlugin, ScorePlugin } from '../../framework/interfaces.js';
import { MAX_NODE_SCORE } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import { PodInfo, type CycleState, type NodeInfo, type Pod } from '../../framework/types.js';
import { allocatableAndRequested, DEFAULT_RESOURCES, type ResourceSpec } from './fit.js';

export const NAME = 'NodeResourcesBalancedAllocation';
const STATE_KEY = `PreScore${NAME}`;

/** (1 - standard deviation of the requested/allocatable fractions) * 100 (balancedResourceScorer). */
export function balancedResourceScore(requested: number[], allocatable: number[]): number {
  const fractions: number[] = [];
  let total = 0;
  for (let i = 0; i < requested.length; i++) {
    const a = allocatable[i]!;
    if (a === 0) continue;
    const f = Math.min(requested[i]! / a, 1);
    total += f;
    fractions.push(f);
  }
  let std = 0;
  if (fractions.length === 2) std = Math.abs((fractions[0]! - fractions[1]!) / 2);
  else if (fractions.length > 2) {
    const mean = total / fractions.length;
    std = Math.sqrt(fractions.reduce((s, f) => s + (f - mean) ** 2, 0) / fractions.length);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

/** Favors nodes whose cpu and memory would be equally used after placing the pod. */
export class NodeResourcesBalancedAllocation implements PreScorePlugin, ScorePlugin {
  readonly name = NAME;
  private readonly resources: readonly ResourceSpec[];
  constructor(args: { resources?: ResourceSpec[] } = {}) { this.resources = args.resources ?? DEFAULT_RESOURCES; }
  preScore(state: CycleState, pod: Pod): Status | undefined {
    const pi = PodInfo.of(pod);
    const r = pi.requests;
    // A best-effort pod changes no balance.
    if (r.milliCpu === 0 && r.memory === 0 && Object.keys(r.scalar).length === 0) return Status.skip();
    state.write(STATE_KEY, pi);
    return undefined;
  }
  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number {
    const pi = state.read<PodInfo>(STATE_KEY) ?? PodInfo.of(pod);
    const req: number[] = []; const alloc: number[] = [];
    for (const r of this.resources) {
      const [a, q] = allocatableAndRequested(nodeInfo, pi, r.name, true);
      if (a === 0) continue;
      alloc.push(a); req.push(q);
    }
    return balancedResourceScore(req, alloc);
  }
}
export const create: PluginFactory = (args) => new NodeResourcesBalancedAllocation((args ?? {}) as { resources?: ResourceSpec[] });
