/**
 * pods/eviction honouring PodDisruptionBudgets (upstream pkg/registry/core/pod/storage/eviction.go).
 * An eviction is a graceful delete that first takes one disruption from the pod's PDB: the PDB's
 * status.disruptionsAllowed is decremented and the pod is recorded in status.disruptedPods (so the
 * disruption controller does not count it healthy before its deletion is seen), compare-and-swap,
 * retried on conflict. No disruption left → 429 TooManyRequests with a DisruptionBudget cause.
 */
import { ApiError, labelSelectorFromObject, type DeleteOptions, type KubeObject } from '@mk8s/api';
import type { RequestContext, Store } from '../../generic/store.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Upstream's MaxDisruptedPodSize: evictions the disruption controller has not confirmed yet. */
export const MAX_DISRUPTED_POD_SIZE = 2000;
/** policyv1.DisruptionBudgetCause. */
export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';
export const EVICTION_BUDGET_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";
const EVICTION_RETRIES = 5;

const isPodReady = (pod: Obj): boolean => (pod.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');

/** canIgnorePDB: terminal, pending or already-deleting pods are deleted without a budget check. */
export function canIgnorePDB(pod: Obj): boolean {
  const phase = pod.status?.phase;
  return !!pod.metadata?.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || phase === undefined;
}

/**
 * The PDBs whose selector matches pod. A nil selector matches nothing; an empty one (`{}`) matches
 * every pod of the namespace (policy/v1 semantics).
 */
export function matchingPdbs(pod: Obj, pdbs: readonly Obj[]): Obj[] {
  return pdbs.filter((pdb) => {
    const sel = pdb.spec?.selector;
    if (sel === undefined || sel === null) return false;
    try { return labelSelectorFromObject(sel).matches(pod.metadata?.labels ?? {}); } catch { return false; }
  });
}

const budgetError = (message: string): ApiError =>
  new ApiError('TooManyRequests', EVICTION_BUDGET_MESSAGE, { details: { causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message }] as never } });

/**
 * checkAndDecrement: returns the PDB with one disruption taken (and pod in disruptedPods unless
 * dryRun), or throws the error upstream answers. Pure.
 */
export function checkAndDecrement(podName: string, pdb: Obj, now: Date, dryRun: boolean): Obj {
  const st: Obj = pdb.status ?? {};
  if ((st.observedGeneration ?? 0) < (pdb.metadata?.generation ?? 0)) throw budgetError('observedGeneration must be >= metadata.generation');
  const allowed: number = st.disruptionsAllowed ?? 0;
  if (allowed < 0) throw new ApiError('Forbidden', `poddisruptionbudgets.policy "${pdb.metadata?.name}" is forbidden: pdb disruptions allowed is negative`, { details: { name: pdb.metadata?.name, group: 'policy', kind: 'poddisruptionbudgets' } });
  if (Object.keys(st.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE) {
    throw new ApiError('Forbidden', `poddisruptionbudgets.policy "${pdb.metadata?.name}" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`, { details: { name: pdb.metadata?.name, group: 'policy', kind: 'poddisruptionbudgets' } });
  }
  if (allowed === 0) throw budgetError(`The disruption budget ${pdb.metadata?.name} needs ${st.desiredHealthy ?? 0} healthy pods and has ${st.currentHealthy ?? 0} currently`);
  const next = structuredClone(pdb);
  next.status = { ...st, disruptionsAllowed: allowed - 1 };
  if (allowed - 1 === 0) next.status.conditions = setDisruptionAllowedCondition(st.conditions, now, pdb.metadata?.generation);
  if (!dryRun) next.status.disruptedPods = { ...(st.disruptedPods ?? {}), [podName]: now.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  return next;
}

/** UpdateDisruptionAllowedCondition with no disruption left: DisruptionAllowed=False InsufficientPods. */
function setDisruptionAllowedCondition(conditions: Obj[] | undefined, now: Date, generation: number | undefined): Obj[] {
  const rest = (conditions ?? []).filter((c) => c.type !== 'DisruptionAllowed');
  const prev = (conditions ?? []).find((c) => c.type === 'DisruptionAllowed');
  const changed = prev?.status !== 'False';
  return [...rest, {
    type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', observedGeneration: generation ?? 0,
    lastTransitionTime: changed ? now.toISOString().replace(/\.\d{3}Z$/, 'Z') : prev?.lastTransitionTime,
  }];
}

export interface EvictionDeps {
  pods: Store;
  pdbs: Store;
  now: () => Date;
}

/** Evicts a pod (POST pods/<name>/eviction with a policy/v1 Eviction body). */
export async function evictPod(d: EvictionDeps, rc: RequestContext, namespace: string, name: string, eviction: Obj): Promise<void> {
  const meta: Obj = eviction['metadata'] ?? {};
  if (meta['name'] !== undefined && meta['name'] !== name) throw new ApiError('BadRequest', 'name in URL does not match name in Eviction object');
  const options: DeleteOptions = structuredClone(eviction['deleteOptions'] ?? {});
  const dryRun = rc.dryRun || (options.dryRun ?? []).includes('All');
  for (let attempt = 0; ; attempt++) {
    const pod = (await d.pods.get(namespace, name)) as Obj;
    const opts = await admitEviction(d, rc, pod, options, dryRun);
    if (opts === 'done') return;
    try {
      const del = dryRun ? opts : await addDisruptionCondition(d, namespace, name, opts);
      await d.pods.delete(rc, namespace, name, del);
      return;
    } catch (err) {
      // The pod changed after the budget check (e.g. became Ready): check again, as upstream's retry.
      if (err instanceof ApiError && err.reason === 'Conflict' && attempt < EVICTION_RETRIES) continue;
      throw err;
    }
  }
}

/** Takes a disruption from the pod's PDB when one is needed; returns the delete options to use. */
async function admitEviction(d: EvictionDeps, rc: RequestContext, pod: Obj, options: DeleteOptions, dryRun: boolean): Promise<DeleteOptions | 'done'> {
  if (canIgnorePDB(pod)) return options;
  const pdbs = matchingPdbs(pod, (await d.pdbs.list(pod.metadata.namespace)).items as Obj[]);
  if (pdbs.length > 1) throw new ApiError('InternalError', 'Internal error occurred: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  const pdb = pdbs[0];
  if (!pdb) return options;
  // An unready pod does not count towards healthy: evicting it takes no disruption when the budget is
  // met anyway (or the PDB says AlwaysAllow). The delete is then conditional on the pod unchanged.
  if (!isPodReady(pod)) {
    const st: Obj = pdb.status ?? {};
    if (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow' || ((st.currentHealthy ?? 0) >= (st.desiredHealthy ?? 0) && (st.desiredHealthy ?? 0) > 0)) {
      return { ...options, preconditions: { ...(options.preconditions ?? {}), resourceVersion: pod.metadata.resourceVersion } };
    }
  }
  if (dryRun) { checkAndDecrement(pod.metadata.name, pdb, d.now(), true); return options; }
  await d.pdbs.mutate(pod.metadata.namespace, pdb.metadata.name, (cur: KubeObject) => checkAndDecrement(pod.metadata.name, cur as Obj, d.now(), false) as KubeObject);
  void rc;
  return options;
}

/**
 * The DisruptionTarget condition upstream puts on an evicted pod before deleting it (checking the
 * delete's preconditions first). Returns the options with a resourceVersion precondition moved to
 * the version this write made, as upstream's addConditionAndDeletePod.
 */
async function addDisruptionCondition(d: EvictionDeps, namespace: string, name: string, options: DeleteOptions): Promise<DeleteOptions> {
  const now = d.now().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const uid = options.preconditions?.uid, rv = options.preconditions?.resourceVersion;
  const conflict = () => new ApiError('Conflict', `Operation cannot be fulfilled on pods "${name}": the object has been modified; please apply your changes to the latest version and try again`, { details: { name, kind: 'pods' } });
  const updated = await d.pods.mutate(namespace, name, (pod: KubeObject) => {
    if (uid && pod.metadata.uid !== uid) throw conflict();
    if (rv && pod.metadata.resourceVersion !== rv) throw conflict();
    const p = pod as Obj;
    const status: Obj = p.status ?? {};
    const conditions: Obj[] = (status.conditions ?? []).filter((c: Obj) => c.type !== 'DisruptionTarget');
    conditions.push({ type: 'DisruptionTarget', status: 'True', lastProbeTime: null, lastTransitionTime: now, reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' });
    p.status = { ...status, conditions };
    return pod;
  });
  return rv ? { ...options, preconditions: { ...options.preconditions, resourceVersion: updated.metadata.resourceVersion ?? rv } } : options;
}
