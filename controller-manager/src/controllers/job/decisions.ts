/**
 * The Job controller's pure decisions (upstream pkg/controller/job: pod_failure_policy.go,
 * backoff_utils.go, and the wantActive / deadline arithmetic of job_controller.go).
 */
import type { Job, Pod, PodFailurePolicy } from '@mk8s/api';
import type { DeepReadonly } from '@mk8s/client';

type P = Pod | DeepReadonly<Pod>;
type J = Job | DeepReadonly<Job>;

/** Pod failure back-off: 10 s, doubling per failure since the last success, capped at 6 minutes (the documented cap). */
export const DEFAULT_JOB_POD_FAILURE_BACKOFF_MS = 10_000;
export const MAX_JOB_POD_FAILURE_BACKOFF_MS = 6 * 60_000;

export type PolicyAction = 'FailJob' | 'Ignore' | 'Count' | 'FailIndex';

/**
 * matchPodFailurePolicy: the first rule a failed pod matches. countFailed false means the failure
 * is ignored (does not count against backoffLimit); message is set for FailJob.
 */
export function matchPodFailurePolicy(policy: DeepReadonly<PodFailurePolicy> | undefined, pod: P): { countFailed: boolean; action?: PolicyAction; message?: string } {
  if (!policy) return { countFailed: true };
  const rules = policy.rules ?? [];
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    const action = rule.action as PolicyAction;
    if (rule.onExitCodes) {
      const req = rule.onExitCodes;
      const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
      const hit = statuses.find((cs) => {
        const t = cs.state?.terminated;
        if (!t || t.exitCode === 0) return false;
        if (req.containerName && req.containerName !== cs.name) return false;
        const inValues = (req.values ?? []).includes(t.exitCode);
        return req.operator === 'In' ? inValues : !inValues;
      });
      if (!hit) continue;
      if (action === 'Ignore') return { countFailed: false, action };
      if (action === 'Count') return { countFailed: true, action };
      if (action === 'FailJob') {
        return { countFailed: true, action, message: `Container ${hit.name} for pod ${pod.metadata?.namespace}/${pod.metadata?.name} failed with exit code ${hit.state!.terminated!.exitCode} matching FailJob rule at index ${i}` };
      }
      return { countFailed: true, action };
    } else if (rule.onPodConditions?.length) {
      const cond = (pod.status?.conditions ?? []).find((c) => rule.onPodConditions!.some((p) => p.type === c.type && (p.status ?? 'True') === c.status));
      if (!cond) continue;
      if (action === 'Ignore') return { countFailed: false, action };
      if (action === 'Count') return { countFailed: true, action };
      if (action === 'FailJob') {
        return { countFailed: true, action, message: `Pod ${pod.metadata?.namespace}/${pod.metadata?.name} has condition ${cond.type} matching FailJob rule at index ${i}` };
      }
      return { countFailed: true, action };
    }
  }
  return { countFailed: true };
}

/** When a pod finished: its last container's finishedAt, else its latest condition change, else its creation. */
export function finishedTimeMs(p: P, fallbackMs: number): number {
  let t = Number.NaN;
  for (const cs of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
    const f = cs.state?.terminated?.finishedAt ? Date.parse(cs.state.terminated.finishedAt) : Number.NaN;
    if (!Number.isNaN(f) && (Number.isNaN(t) || f > t)) t = f;
  }
  if (!Number.isNaN(t)) return t;
  for (const c of p.status?.conditions ?? []) {
    const f = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : Number.NaN;
    if (!Number.isNaN(f) && (Number.isNaN(t) || f > t)) t = f;
  }
  if (!Number.isNaN(t)) return t;
  if (p.metadata?.deletionTimestamp) return Date.parse(p.metadata.deletionTimestamp);
  return fallbackMs;
}

/** backoffRecord: failures since the last success and when the last of them happened. */
export interface BackoffRecord { failuresAfterLastSuccess: number; lastFailureTimeMs?: number }

/** newBackoffRecord: folds the pods counted in this sync into the previous record. */
export function nextBackoffRecord(prev: BackoffRecord | undefined, newSucceeded: readonly P[], newFailed: readonly P[], nowMs: number): BackoffRecord {
  const rec: BackoffRecord = { failuresAfterLastSuccess: prev?.failuresAfterLastSuccess ?? 0, ...(prev?.lastFailureTimeMs !== undefined ? { lastFailureTimeMs: prev.lastFailureTimeMs } : {}) };
  const failedTimes = newFailed.map((p) => finishedTimeMs(p, nowMs)).sort((a, b) => a - b);
  if (newSucceeded.length === 0) {
    if (failedTimes.length === 0) return rec;
    return { failuresAfterLastSuccess: rec.failuresAfterLastSuccess + failedTimes.length, lastFailureTimeMs: failedTimes[failedTimes.length - 1]! };
  }
  const lastSuccess = Math.max(...newSucceeded.map((p) => finishedTimeMs(p, nowMs)));
  const out: BackoffRecord = { failuresAfterLastSuccess: 0 };
  for (let i = failedTimes.length - 1; i >= 0; i--) {
    if (failedTimes[i]! <= lastSuccess) break;
    out.lastFailureTimeMs ??= failedTimes[i]!;
    out.failuresAfterLastSuccess++;
  }
  return out;
}

/** getRemainingTime: how long pod creation must still wait (0 = create now). */
export function remainingBackoffMs(rec: BackoffRecord, nowMs: number, baseMs = DEFAULT_JOB_POD_FAILURE_BACKOFF_MS, maxMs = MAX_JOB_POD_FAILURE_BACKOFF_MS): number {
  if (rec.failuresAfterLastSuccess === 0 || rec.lastFailureTimeMs === undefined) return 0;
  let backoff = baseMs;
  for (let i = 1; i < rec.failuresAfterLastSuccess; i++) {
    backoff *= 2;
    if (backoff >= maxMs) { backoff = maxMs; break; }
  }
  const elapsed = nowMs - rec.lastFailureTimeMs;
  return backoff < elapsed ? 0 : backoff - elapsed;
}

/** pastBackoffLimitOnFailure: restartPolicy OnFailure counts container restarts of running pods. */
export function pastBackoffLimitOnFailure(job: J, pods: readonly P[]): boolean {
  if (job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const p of pods) {
    if (p.status?.phase !== 'Running' && p.status?.phase !== 'Pending') continue;
    for (const cs of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) restarts += cs.restartCount ?? 0;
  }
  const limit = job.spec?.backoffLimit ?? 6;
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

/** How many pods should be running (manageJob's wantActive). */
export function wantActive(job: J, succeeded: number, active: number): number {
  if (job.spec?.suspend) return 0;
  const parallelism = job.spec?.parallelism ?? 1;
  const completions = job.spec?.completions;
  if (completions === undefined || completions === null) return succeeded > 0 ? active : parallelism;
  return Math.max(0, Math.min(parallelism, completions - succeeded));
}

/** ms until activeDeadlineSeconds passes (≤ 0: past); undefined when there is no deadline or no start. */
export function deadlineRemainingMs(job: J, nowMs: number): number | undefined {
  const ads = job.spec?.activeDeadlineSeconds;
  const start = job.status?.startTime ? Date.parse(job.status.startTime) : Number.NaN;
  if (ads === undefined || ads === null || Number.isNaN(start) || job.spec?.suspend) return undefined;
  return start + ads * 1000 - nowMs;
}
