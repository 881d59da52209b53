/**
 * batch/v1 defaulting, as upstream's pkg/apis/batch/v1 SetDefaults_Job / SetDefaults_CronJob.
 * The selector and the job-name / controller-uid labels are not defaults: the registry's create
 * strategy generates them once the uid exists (generateJobSelector below).
 */
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The labels and annotations upstream puts on Jobs and their pods (pkg/apis/batch/types.go). */
export const JOB_LABELS = {
  legacyJobName: 'job-name',
  jobName: 'batch.kubernetes.io/job-name',
  legacyControllerUid: 'controller-uid',
  controllerUid: 'batch.kubernetes.io/controller-uid',
  completionIndex: 'batch.kubernetes.io/job-completion-index',
} as const;
export const JOB_COMPLETION_INDEX_ANNOTATION = 'batch.kubernetes.io/job-completion-index';
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
export const JOB_COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';
export const CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

/** SetDefaults_Job for a JobSpec (also used by the Job registry; the pod template is defaulted by the caller). */
export function defaultJobSpec(spec: Obj): void {
  if (spec.completions == null && spec.parallelism == null) { spec.completions = 1; spec.parallelism = 1; }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex != null ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  if (isObj(spec.podFailurePolicy)) {
    for (const rule of Array.isArray(spec.podFailurePolicy.rules) ? spec.podFailurePolicy.rules : []) {
      for (const pattern of isObj(rule) && Array.isArray(rule.onPodConditions) ? rule.onPodConditions : []) {
        if (isObj(pattern)) pattern.status ??= 'True';
      }
    }
  }
  spec.podReplacementPolicy ??= isObj(spec.podFailurePolicy) ? 'Failed' : 'TerminatingOrFailed';
}

export function defaultJob(job: Obj, defaultPodTemplate: (t: unknown) => void): void {
  const spec: Obj = isObj(job.spec) ? job.spec : (job.spec = {});
  defaultJobSpec(spec);
  defaultPodTemplate(spec.template ??= {});
  const labels = spec.template?.metadata?.labels;
  const meta: Obj = isObj(job.metadata) ? job.metadata : (job.metadata = {});
  if (isObj(labels) && Object.keys(labels).length && !(isObj(meta.labels) && Object.keys(meta.labels).length)) meta.labels = { ...labels };
}

export function defaultCronJob(cj: Obj, defaultPodTemplate: (t: unknown) => void): void {
  const spec: Obj = isObj(cj.spec) ? cj.spec : (cj.spec = {});
  spec.concurrencyPolicy ??= 'Allow';
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  const jt: Obj = isObj(spec.jobTemplate) ? spec.jobTemplate : (spec.jobTemplate = {});
  const js: Obj = isObj(jt.spec) ? jt.spec : (jt.spec = {});
  defaultPodTemplate(js.template ??= {});
}

/**
 * generateSelector (pkg/registry/batch/job/strategy.go): unless spec.manualSelector, the pod
 * template gets job-name and controller-uid labels (legacy and batch.kubernetes.io/ forms) and the
 * selector matches batch.kubernetes.io/controller-uid. Job labels, when empty, become the
 * template's labels (what upstream's defaulting shows once the object is read back). Mutates job.
 */
export function generateJobSelector(job: Obj): void {
  const meta: Obj = isObj(job.metadata) ? job.metadata : {};
  const spec: Obj = isObj(job.spec) ? job.spec : (job.spec = {});
  if (spec.manualSelector !== true) {
    const tpl: Obj = isObj(spec.template) ? spec.template : (spec.template = {});
    const tm: Obj = isObj(tpl.metadata) ? tpl.metadata : (tpl.metadata = {});
    const labels: Obj = isObj(tm.labels) ? tm.labels : (tm.labels = {});
    labels[JOB_LABELS.legacyJobName] ??= String(meta.name ?? '');
    labels[JOB_LABELS.jobName] ??= String(meta.name ?? '');
    labels[JOB_LABELS.legacyControllerUid] ??= String(meta.uid ?? '');
    labels[JOB_LABELS.controllerUid] ??= String(meta.uid ?? '');
    const sel: Obj = isObj(spec.selector) ? spec.selector : (spec.selector = {});
    const ml: Obj = isObj(sel.matchLabels) ? sel.matchLabels : (sel.matchLabels = {});
    ml[JOB_LABELS.controllerUid] ??= String(meta.uid ?? '');
  }
  const tl = spec.template?.metadata?.labels;
  if (isObj(tl) && Object.keys(tl).length && !(isObj(meta.labels) && Object.keys(meta.labels).length)) meta.labels = { ...tl };
}
