import { Pods } from '@mk8s/api';
import type { Handle, PluginFactory, PostFilterPlugin, PostFilterResult } from '../../framework/interfaces.js';
import { FitError, newDiagnosis } from '../../framework/fit-error.js';
import { Status } from '../../framework/status.js';
import { CycleState, NodeInfo, podKey, podPriority, type Pod } from '../../framework/types.js';

export const NAME = 'DefaultPreemption';
export const MSG_NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const MSG_NO_VICTIMS = 'No preemption victims found for incoming pod';

/** A node where preemption would make room, and who would go. */
export interface Candidate { nodeName: string; victims: Pod[]; numPdbViolations: number }

const startTime = (p: Pod): number => Date.parse(p.status?.startTime ?? p.metadata.creationTimestamp ?? '') || 0;

/** Higher priority first; on a tie, the one running longer (util.MoreImportantPod). */
export const moreImportant = (a: Pod, b: Pod): number => podPriority(b) - podPriority(a) || startTime(a) - startTime(b);

/**
 * Picks among candidates as upstream's pickOneNodeForPreemption: fewest PDB violations, lowest
 * highest-priority victim, lowest priority sum, fewest victims, latest start of the highest-priority
 * victims, then the first.
 */
export function pickOneNodeForPreemption(cands: Candidate[]): Candidate | undefined {
  const by = (xs: Candidate[], f: (c: Candidate) => number): Candidate[] => {
    const best = Math.min(...xs.map(f));
    return xs.filter((c) => f(c) === best);
  };
  let xs = cands.filter((c) => c.victims.length >= 0);
  if (xs.length === 0) return undefined;
  xs = by(xs, (c) => c.numPdbViolations);
  xs = by(xs, (c) => (c.victims[0] ? podPriority(c.victims[0]) : -Infinity));
  xs = by(xs, (c) => c.victims.reduce((s, v) => s + podPriority(v) + 2 ** 31, 0));
  xs = by(xs, (c) => c.victims.length);
  xs = by(xs, (c) => {
    const top = c.victims[0] ? podPriority(c.victims[0]) : 0;
    const earliest = Math.min(...c.victims.filter((v) => podPriority(v) === top).map(startTime));
    return -earliest; // latest start wins
  });
  return xs[0];
}

/**
 * PostFilter: when a pod fits nowhere, finds nodes where evicting lower-priority pods makes it fit,
 * picks one, deletes the victims and nominates the node (status.nominatedNodeName).
 */
export class DefaultPreemption implements PostFilterPlugin {
  readonly name = NAME;
  constructor(private readonly h: Handle) {}

  async postFilter(state: CycleState, pod: Pod, nodeStatuses: ReadonlyMap<string, Status>, signal: AbortSignal):
    Promise<{ result?: PostFilterResult; status?: Status }> {
    const notEligible = this.eligibilityError(state, pod);
    if (notEligible) return { status: Status.unschedulable(`preemption: ${notEligible}`) };
    const { candidates, statuses } = this.findCandidates(state, pod, nodeStatuses);
    if (candidates.length === 0) {
      const d = newDiagnosis();
      d.nodeStatuses = statuses;
      return { result: { nominatedNodeName: '' }, status: Status.unschedulable(`preemption: ${new FitError(statuses.size, d).message}`) };
    }
    const best = pickOneNodeForPreemption(candidates)!;
    await this.prepareCandidate(best, pod, signal);
    return { result: { nominatedNodeName: best.nodeName, victims: best.victims.length } };
  }

  /** Why pod may not preempt, or undefined (PodEligibleToPreemptOthers). */
  private eligibilityError(state: CycleState, pod: Pod): string | undefined {
    if (pod.spec?.preemptionPolicy === 'Never') return 'not eligible due to preemptionPolicy=Never.';
    const nominated = pod.status?.nominatedNodeName;
    if (nominated) {
      const ni = state.snapshot.get(nominated);
      // Room is already being made there: wait for the terminating victims instead of preempting more.
      if (ni?.pods.some((p) => p.pod.metadata.deletionTimestamp && podPriority(p.pod) < podPriority(pod))) {
        return 'not eligible due to a terminating pod on the nominated node.';
      }
    }
    return undefined;
  }

  /** Dry-runs preemption on every node where it might help (selectVictimsOnNode). */
  findCandidates(state: CycleState, pod: Pod, nodeStatuses: ReadonlyMap<string, Status>): { candidates: Candidate[]; statuses: Map<string, Status> } {
    const statuses = new Map<string, Status>();
    const candidates: Candidate[] = [];
    for (const ni of state.snapshot.nodeInfoList) {
      const s = nodeStatuses.get(ni.name);
      if (s?.code === 'UnschedulableAndUnresolvable') { statuses.set(ni.name, Status.unschedulableAndUnresolvable(MSG_NOT_HELPFUL)); continue; }
      const r = this.selectVictimsOnNode(state, pod, ni);
      if (r.status) statuses.set(ni.name, r.status);
      else candidates.push({ nodeName: ni.name, victims: r.victims, numPdbViolations: 0 });
    }
    return { candidates, statuses };
  }

  private fits(state: CycleState, pod: Pod, ni: NodeInfo): Status | undefined {
    const fw = this.h.framework();
    const st = new CycleState(state.snapshot.withNode(ni));
    const pre = fw.runPreFilterPlugins(st, pod);
    if (pre.status) return pre.status;
    return fw.runFilterPluginsWithNominatedPods(st, pod, ni).status;
  }

  selectVictimsOnNode(state: CycleState, pod: Pod, original: NodeInfo): { victims: Pod[]; status?: Status } {
    const ni = original.clone();
    const prio = podPriority(pod);
    const potential = ni.pods.filter((p) => podPriority(p.pod) < prio);
    if (potential.length === 0) return { victims: [], status: Status.unschedulableAndUnresolvable(MSG_NO_VICTIMS) };
    for (const p of potential) ni.removePod(p.key);
    const s = this.fits(state, pod, ni);
    if (s) return { victims: [], status: s };
    // Give back as many pods as possible, most important first (PDBs are not served here, so none violate).
    const victims: Pod[] = [];
    for (const p of [...potential].sort((a, b) => moreImportant(a.pod, b.pod))) {
      ni.addPod(p);
      if (this.fits(state, pod, ni)) { ni.removePod(p.key); victims.push(p.pod); }
    }
    return { victims };
  }

  private async prepareCandidate(c: Candidate, pod: Pod, signal: AbortSignal): Promise<void> {
    const client = this.h.client;
    if (!client) return;
    const schedulerName = this.h.framework().schedulerName;
    await Promise.all(c.victims.map(async (v) => {
      const pods = client.resource(Pods, v.metadata.namespace ?? 'default');
      try {
        await pods.patch(v.metadata.name, 'strategic', { status: { conditions: [{
          type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler',
          message: `${schedulerName}: preempting to accommodate a higher priority pod`, lastTransitionTime: new Date(this.h.clock.now()).toISOString(),
        }] } }, { subresource: 'status', signal });
      } catch (err) {
        this.h.logger.debug({ err, pod: podKey(v) }, 'Could not add DisruptionTarget condition to victim');
      }
      try {
        await pods.delete(v.metadata.name, { signal });
      } catch (err) {
        this.h.logger.warn({ err, pod: podKey(v) }, 'Could not delete preemption victim');
        return;
      }
      this.h.recordEvent(v, 'Normal', 'Preempted', 'Preempting', `Preempted by pod ${pod.metadata.uid ?? podKey(pod)} on node ${c.nodeName}`);
    }));
    // Lower-priority pods nominated to this node lose their claim: the room is for this pod now.
    const prio = podPriority(pod);
    for (const np of this.h.nominator.nominatedPodsForNode(c.nodeName)) {
      if (podPriority(np) >= prio || podKey(np) === podKey(pod)) continue;
      try {
        await client.resource(Pods, np.metadata.namespace ?? 'default').patch(np.metadata.name, 'merge', { status: { nominatedNodeName: null } }, { subresource: 'status', signal });
      } catch (err) {
        this.h.logger.debug({ err, pod: podKey(np) }, 'Could not clear nominatedNodeName');
      }
    }
  }
}
export const create: PluginFactory = (_args, h) => new DefaultPreemption(h);

