/**
 * Disruption controller (upstream pkg/controller/disruption): keeps each PodDisruptionBudget's
 * status (expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed, disruptedPods,
 * observedGeneration, the DisruptionAllowed condition) so that pods/eviction can decide. Watches
 * PodDisruptionBudgets, Pods and the pods' controllers (Deployments, ReplicaSets, StatefulSets,
 * ReplicationControllers) for the expected scale; writes PDB status and Events.
 */
import {
  Deployments, isConflict, labelSelectorFromObject, PodDisruptionBudgets, Pods, ReplicaSets, ReplicationControllers, StatefulSets,
  type Condition, type Pod, type PodDisruptionBudget, type PodDisruptionBudgetStatus,
} from '@mk8s/api';
import { controllerOf, objectKey, type DeepReadonly, type SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import { canonicalJson } from '../../util/hash.js';
import { scaledValue } from '../../util/intstr.js';
import { clone, rfc3339, type Obj } from '../../util/meta.js';
import { isPodReady } from '../../util/pods.js';

export type PDBObj = Obj<PodDisruptionBudget>;
type PodObj = Obj<Pod>;
type ScaleObj = Obj<{ metadata?: PodObj['metadata']; spec?: { replicas?: number } }>;
type RO<T> = DeepReadonly<T> | T;

/** Upstream's DeletionTimeout: an eviction not followed by the pod's deletion within this is forgotten. */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

/** Pods the PDB covers: a nil selector matches none, an empty one every pod of the namespace (policy/v1). */
export function podsForPdb(pdb: RO<PDBObj>, pods: readonly RO<PodObj>[]): RO<PodObj>[] {
  const sel = pdb.spec?.selector;
  if (!sel) return [];
  let s;
  try { s = labelSelectorFromObject(sel as never); } catch { return []; }
  return pods.filter((p) => s.matches(p.metadata.labels ?? {}));
}

/** buildDisruptedPodMap: evictions still pending (pod not yet deleting, within the timeout), and when to look again. */
export function disruptedPodMap(pdb: RO<PDBObj>, pods: readonly RO<PodObj>[], now: number): { map: Record<string, string>; recheckAtMs?: number } {
  const old = pdb.status?.disruptedPods ?? {};
  const map: Record<string, string> = {};
  let recheckAtMs: number | undefined;
  for (const p of pods) {
    if (p.metadata.deletionTimestamp) continue;
    const t = old[p.metadata.name];
    if (!t) continue;
    const expires = Date.parse(t) + DELETION_TIMEOUT_MS;
    if (expires < now) continue;
    map[p.metadata.name] = t;
    recheckAtMs = recheckAtMs === undefined ? expires : Math.min(recheckAtMs, expires);
  }
  return { map, ...(recheckAtMs !== undefined ? { recheckAtMs } : {}) };
}

/** countHealthyPods: Ready, not deleting, not already being evicted. */
export function countHealthy(pods: readonly RO<PodObj>[], disrupted: Record<string, string>): number {
  return pods.filter((p) => !p.metadata.deletionTimestamp && !disrupted[p.metadata.name] && isPodReady(p)).length;
}

/**
 * getExpectedPodCount: minAvailable as a number counts the matching pods; a percentage or
 * maxUnavailable counts the replicas their controllers want (scale: undefined when a pod has no
 * controller with a scale, which upstream reports as a sync failure).
 */
export function expectedPodCount(pdb: RO<PDBObj>, pods: readonly RO<PodObj>[], scale: () => number | undefined): { expected: number; desiredHealthy: number } | { error: string } {
  const spec = pdb.spec ?? {};
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    const expected = scale();
    if (expected === undefined) return { error: 'found no controllers for pods' };
    const maxUnavailable = scaledValue(spec.maxUnavailable as number | string, expected, true);
    return { expected, desiredHealthy: Math.max(0, expected - maxUnavailable) };
  }
  if (typeof spec.minAvailable === 'number') return { expected: pods.length, desiredHealthy: spec.minAvailable };
  if (typeof spec.minAvailable === 'string') {
    const expected = scale();
    if (expected === undefined) return { error: 'found no controllers for pods' };
    return { expected, desiredHealthy: scaledValue(spec.minAvailable, expected, true) };
  }
  return { expected: pods.length, desiredHealthy: 0 };
}

export class DisruptionController extends BaseController {
  static readonly NAME = 'disruption';
  readonly name = DisruptionController.NAME;
  readonly pdbs: SharedInformer<PDBObj>;
  readonly pods: SharedInformer<PodObj>;
  private readonly scaleInformers: Record<string, SharedInformer<ScaleObj>>;

  constructor(ctx: ControllerContext) {
    super(ctx, 'disruption');
    this.pdbs = ctx.informers.informerFor<PDBObj>(PodDisruptionBudgets);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.scaleInformers = {
      ReplicaSet: ctx.informers.informerFor<ScaleObj>(ReplicaSets),
      Deployment: ctx.informers.informerFor<ScaleObj>(Deployments),
      StatefulSet: ctx.informers.informerFor<ScaleObj>(StatefulSets),
      ReplicationController: ctx.informers.informerFor<ScaleObj>(ReplicationControllers),
    };
    this.pdbs.addEventHandler({ onAdd: (p) => this.enqueue(objectKey(p)), onUpdate: (_, p) => this.enqueue(objectKey(p)), onDelete: (p) => this.enqueue(objectKey(p)) });
    const forPod = (p: PodObj) => { for (const pdb of this.pdbs.lister.list(p.metadata.namespace)) if (podsForPdb(pdb, [p]).length) this.enqueue(objectKey(pdb)); };
    this.pods.addEventHandler({ onAdd: forPod, onUpdate: (o, p) => { forPod(p); forPod(o); }, onDelete: forPod });
    // A scale change changes expectedPods of the PDBs over its pods.
    const forNamespace = (o: ScaleObj) => { for (const pdb of this.pdbs.lister.list(o.metadata.namespace)) this.enqueue(objectKey(pdb)); };
    for (const inf of Object.values(this.scaleInformers)) inf.addEventHandler({ onUpdate: (_, o) => forNamespace(o), onAdd: forNamespace, onDelete: forNamespace });
  }

  /** getExpectedScale: the sum of the distinct controllers' spec.replicas (a Deployment's RS counts as the Deployment). */
  private expectedScale(pods: readonly RO<PodObj>[]): number | undefined {
    const seen = new Map<string, number>();
    for (const p of pods) {
      let ref = controllerOf(p);
      if (!ref) return undefined;
      let owner = this.scaleInformers[ref.kind]?.lister.get(`${p.metadata.namespace}/${ref.name}`);
      if (!owner || owner.metadata.uid !== ref.uid) return undefined;
      if (ref.kind === 'ReplicaSet') {
        const dref = controllerOf(owner);
        const dep = dref?.kind === 'Deployment' ? this.scaleInformers['Deployment']?.lister.get(`${p.metadata.namespace}/${dref.name}`) : undefined;
        if (dep && dref && dep.metadata.uid === dref.uid) { owner = dep; ref = dref; }
      }
      seen.set(owner.metadata.uid ?? `${ref.kind}/${ref.name}`, owner.spec?.replicas ?? 1);
    }
    let sum = 0;
    for (const n of seen.values()) sum += n;
    return sum;
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const pdb = this.pdbs.lister.get(key);
    if (!pdb) return;
    const now = this.ctx.clock.now();
    const pods = podsForPdb(pdb, this.pods.lister.list(pdb.metadata.namespace));
    if (pods.length === 0) this.ctx.recorder.event(pdb, 'Normal', 'NoPods', 'No matching pods found');
    const exp = expectedPodCount(pdb, pods, () => this.expectedScale(pods));
    const { map, recheckAtMs } = disruptedPodMap(pdb, pods, now);
    let status: PodDisruptionBudgetStatus;
    if ('error' in exp) {
      this.ctx.recorder.event(pdb, 'Warning', 'CalculateExpectedPodCountFailed', 'Failed to calculate the number of expected pods: %v', exp.error);
      status = this.buildStatus(pdb, 0, 0, 0, map, now, 'SyncFailed', exp.error);
    } else {
      status = this.buildStatus(pdb, countHealthy(pods, map), exp.desiredHealthy, exp.expected, map, now);
    }
    await this.updateStatus(pdb, status, signal);
    if (recheckAtMs !== undefined) return { requeueAfterMs: Math.max(0, recheckAtMs - now) + 1000 };
  }

  private buildStatus(pdb: RO<PDBObj>, currentHealthy: number, desiredHealthy: number, expected: number, disrupted: Record<string, string>, now: number, failReason?: string, failMessage?: string): PodDisruptionBudgetStatus {
    let allowed = currentHealthy - desiredHealthy;
    if (expected <= 0 || allowed <= 0) allowed = 0;
    const want = failReason ? { status: 'False', reason: failReason, message: failMessage ?? '' }
      : allowed > 0 ? { status: 'True', reason: 'SufficientPods', message: '' } : { status: 'False', reason: 'InsufficientPods', message: '' };
    const prev = (pdb.status?.conditions ?? []).find((c) => c.type === 'DisruptionAllowed');
    const cond: Condition = {
      type: 'DisruptionAllowed', ...want, observedGeneration: pdb.metadata.generation ?? 0,
      lastTransitionTime: prev && prev.status === want.status ? prev.lastTransitionTime : rfc3339(now),
    };
    const s: PodDisruptionBudgetStatus = {
      observedGeneration: pdb.metadata.generation ?? 0, currentHealthy, desiredHealthy, expectedPods: expected, disruptionsAllowed: allowed,
      conditions: [...(clone(pdb.status?.conditions ?? []) as Condition[]).filter((c) => c.type !== 'DisruptionAllowed'), cond],
    };
    if (Object.keys(disrupted).length) s.disruptedPods = disrupted;
    return s;
  }

  private async updateStatus(pdb: PDBObj, status: PodDisruptionBudgetStatus, signal: AbortSignal): Promise<void> {
    if (canonicalJson(pdb.status ?? {}) === canonicalJson(status)) return;
    const client = this.ctx.client.resource<PDBObj>(PodDisruptionBudgets, pdb.metadata.namespace);
    try {
      await client.updateStatus({ ...clone(pdb), status }, { signal });
    } catch (err) {
      // A concurrent eviction changed disruptionsAllowed: recompute from the fresh object on the next sync.
      if (isConflict(err)) { this.enqueue(objectKey(pdb)); return; }
      throw err;
    }
  }
}
