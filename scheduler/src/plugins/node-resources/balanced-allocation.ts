import type { PluginFactory, PreScorePlugin, ScorePlugin } from '../../framework/interfaces.js';
import { MAX_NODE_SCORE } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import { PodInfo, type CycleState, type NodeInfo, type Pod } from '../../framework/types.js';
import { allocatableFor, requestedWith, DEFAULT_RESOURCES, type ResourceSpec } from './fit.js';

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
  return Math.trunc((1 - stdDev(fractions, total)) * MAX_NODE_SCORE);
}

function stdDev(fractions: readonly number[], total: number): number {
  if (fractions.length === 2) return Math.abs((fractions[0]! - fractions[1]!) / 2);
  if (fractions.length < 2) return 0;
  const mean = total / fractions.length;
  let sq = 0;
  for (const f of fractions) sq += (f - mean) ** 2;
  return Math.sqrt(sq / fractions.length);
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
    // balancedResourceScore without its arrays: this runs for every feasible node of every cycle.
    const fractions = this.fractions;
    fractions.length = 0;
    let total = 0;
    for (const r of this.resources) {
      const a = allocatableFor(nodeInfo, pi, r.name);
      if (a === 0) continue;
      const f = Math.min(requestedWith(nodeInfo, pi, r.name, true) / a, 1);
      total += f;
      fractions.push(f);
    }
    return Math.trunc((1 - stdDev(fractions, total)) * MAX_NODE_SCORE);
  }
  private readonly fractions: number[] = [];
}
export const create: PluginFactory = (args) => new NodeResourcesBalancedAllocation((args ?? {}) as { resources?: ResourceSpec[] });
