/**
 * batch/v1 validation (Job, CronJob), as upstream's pkg/apis/batch/validation.
 */
import { isValidTimeZone, parseCronSchedule } from '../cron.js';
import { JOB_LABELS } from '../defaults/batch.js';
import { labelSelectorFromObject } from '../selectors/labels.js';
import { child, duplicate, GoRepr, index as idx, invalid, notSupported, required, tooMany, type FieldError } from './field.js';
import { labelSelectorRepr, validateAnnotations, validateImmutableField, validateLabels, validateLabelSelector } from './meta.js';
import { isQualifiedName } from './names.js';
import { validateNonnegative, validatePodTemplateSpec } from './pod.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export const COMPLETION_MODES = ['NonIndexed', 'Indexed'] as const;
export const POD_FAILURE_POLICY_ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'] as const;
export const CONCURRENCY_POLICIES = ['Allow', 'Forbid', 'Replace'] as const;
const MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000;
const MAX_POD_FAILURE_POLICY_RULES = 20;
const MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES = 255;
const MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS = 20;
/** DNS1035LabelMaxLength - 11: the Job name a CronJob makes (`<name>-<minutes>`) must stay a label. */
const CRONJOB_NAME_MAX_LENGTH = 52;

function validatePodFailurePolicy(spec: Obj, path: string, errs: FieldError[]): void {
  const pfp = spec.podFailurePolicy;
  if (!isObj(pfp)) return;
  const rules = arr(pfp.rules);
  const rulesPath = child(path, 'rules');
  if (rules.length > MAX_POD_FAILURE_POLICY_RULES) errs.push(tooMany(rulesPath, rules.length, MAX_POD_FAILURE_POLICY_RULES));
  const containerNames = new Set(arr(spec.template?.spec?.containers).map((c) => (c as Obj)?.name));
  rules.forEach((r, i) => {
    const rule: Obj = isObj(r) ? r : {};
    const rp = idx(rulesPath, i);
    if (!(POD_FAILURE_POLICY_ACTIONS as readonly string[]).includes(rule.action)) {
      errs.push(notSupported(child(rp, 'action'), rule.action ?? '', POD_FAILURE_POLICY_ACTIONS));
    } else if (rule.action === 'FailIndex' && spec.backoffLimitPerIndex == null) {
      errs.push(invalid(child(rp, 'action'), rule.action, 'requires the backoffLimitPerIndex to be set'));
    }
    const hasCodes = isObj(rule.onExitCodes);
    const conds = arr(rule.onPodConditions);
    if (!hasCodes && conds.length === 0) errs.push(invalid(rp, new GoRepr(''), 'specifying one of OnExitCodes and OnPodConditions is required'));
    else if (hasCodes && conds.length) errs.push(invalid(rp, new GoRepr(''), 'specifying both OnExitCodes and OnPodConditions is not supported'));
    if (hasCodes) {
      const c: Obj = rule.onExitCodes;
      const cp = child(rp, 'onExitCodes');
      if (c.containerName != null && !containerNames.has(c.containerName)) {
        errs.push(invalid(child(cp, 'containerName'), c.containerName, 'must be one of the container or initContainer names in the pod template'));
      }
      if (c.operator !== 'In' && c.operator !== 'NotIn') errs.push(notSupported(child(cp, 'operator'), c.operator ?? '', ['In', 'NotIn']));
      const values = arr(c.values);
      const vp = child(cp, 'values');
      if (values.length === 0) errs.push(invalid(vp, values, 'at least one value is required'));
      else if (values.length > MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES) errs.push(tooMany(vp, values.length, MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES));
      const seen = new Set<unknown>();
      values.forEach((v, j) => {
        const p = idx(vp, j);
        if (c.operator === 'In' && v === 0) errs.push(invalid(p, v, 'must not be 0 for the In operator'));
        if (seen.has(v)) errs.push(duplicate(p, v));
        if (j > 0 && (values[j - 1] as number) > (v as number)) errs.push(invalid(p, v, 'must be ordered'));
        seen.add(v);
      });
    }
    const pcp = child(rp, 'onPodConditions');
    if (conds.length > MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS) errs.push(tooMany(pcp, conds.length, MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS));
    conds.forEach((p, j) => {
      const pat: Obj = isObj(p) ? p : {};
      const pp = idx(pcp, j);
      if (!pat.type) errs.push(required(child(pp, 'type'), ''));
      else for (const m of isQualifiedName(String(pat.type))) errs.push(invalid(child(pp, 'type'), pat.type, m));
      if (!['True', 'False', 'Unknown'].includes(pat.status)) errs.push(notSupported(child(pp, 'status'), pat.status ?? '', ['True', 'False', 'Unknown']));
    });
  });
}

/** validateJobSpec: what a Job and a CronJob's jobTemplate share. */
function validateJobSpecCommon(spec: Obj, path: string, errs: FieldError[]): void {
  errs.push(...validateNonnegative(spec.parallelism, child(path, 'parallelism')));
  errs.push(...validateNonnegative(spec.completions, child(path, 'completions')));
  errs.push(...validateNonnegative(spec.activeDeadlineSeconds, child(path, 'activeDeadlineSeconds')));
  errs.push(...validateNonnegative(spec.backoffLimit, child(path, 'backoffLimit')));
  errs.push(...validateNonnegative(spec.ttlSecondsAfterFinished, child(path, 'ttlSecondsAfterFinished')));
  if (spec.completionMode != null) {
    if (!(COMPLETION_MODES as readonly string[]).includes(spec.completionMode)) {
      errs.push(notSupported(child(path, 'completionMode'), spec.completionMode, COMPLETION_MODES));
    }
    if (spec.completionMode === 'Indexed') {
      if (spec.completions == null) errs.push(required(child(path, 'completions'), 'when completion mode is Indexed'));
      if (typeof spec.parallelism === 'number' && spec.parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB) {
        errs.push(invalid(child(path, 'parallelism'), spec.parallelism, `must be less than or equal to ${MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed`));
      }
    }
  }
  if (spec.podReplacementPolicy != null && !['TerminatingOrFailed', 'Failed'].includes(spec.podReplacementPolicy)) {
    errs.push(notSupported(child(path, 'podReplacementPolicy'), spec.podReplacementPolicy, ['TerminatingOrFailed', 'Failed']));
  }
  validatePodFailurePolicy(spec, child(path, 'podFailurePolicy'), errs);
  const tpl = spec.template;
  errs.push(...validatePodTemplateSpec(tpl, child(path, 'template')));
  const rp = isObj(tpl) ? tpl.spec?.restartPolicy : undefined;
  const rpPath = child(path, 'template', 'spec', 'restartPolicy');
  if (rp !== 'OnFailure' && rp !== 'Never') errs.push(notSupported(rpPath, rp ?? '', ['OnFailure', 'Never']));
  else if (isObj(spec.podFailurePolicy) && rp !== 'Never') errs.push(invalid(rpPath, rp, 'only "Never" is supported when podFailurePolicy is specified'));
}

/** ValidateJobSpec: the common checks plus a selector that matches the template. */
function validateJobSpec(spec: Obj, path: string, errs: FieldError[]): void {
  validateJobSpecCommon(spec, path, errs);
  const sel = spec.selector;
  if (!isObj(sel)) { errs.push(required(child(path, 'selector'), '')); return; }
  const selErrs = validateLabelSelector(sel, child(path, 'selector'));
  errs.push(...selErrs);
  if (selErrs.length) return;
  try {
    const selector = labelSelectorFromObject(sel);
    const labels: Obj = isObj(spec.template?.metadata?.labels) ? spec.template.metadata.labels : {};
    if (!selector.matches(labels)) errs.push(invalid(child(path, 'template', 'metadata', 'labels'), labels, '`selector` does not match template `labels`'));
  } catch { /* reported by validateLabelSelector */ }
}

/** ValidateGeneratedSelector: an auto-generated selector must be exactly the controller-uid one. */
function validateGeneratedSelector(job: Obj, errs: FieldError[]): void {
  const spec: Obj = isObj(job.spec) ? job.spec : {};
  if (spec.manualSelector === true) return;
  const labels = spec.template?.metadata?.labels;
  if (!isObj(labels)) return;
  const uid = String(job.metadata?.uid ?? '');
  const lp = 'spec.template.metadata.labels';
  if (labels[JOB_LABELS.legacyControllerUid] !== undefined && labels[JOB_LABELS.legacyControllerUid] !== uid) errs.push(invalid(lp, labels, '`controller-uid` must match uid'));
  if (labels[JOB_LABELS.controllerUid] !== undefined && labels[JOB_LABELS.controllerUid] !== uid) errs.push(invalid(lp, labels, `\`${JOB_LABELS.controllerUid}\` must match uid`));
  const sel = spec.selector;
  if (!isObj(sel)) return;
  try {
    if (!labelSelectorFromObject(sel).matches({ [JOB_LABELS.controllerUid]: uid })) errs.push(invalid('spec.selector', labelSelectorRepr(sel), '`selector` not auto-generated'));
  } catch { /* reported elsewhere */ }
}

/** ValidateJob (create and the spec part of update). */
export function validateJob(job: unknown): FieldError[] {
  const j: Obj = isObj(job) ? job : {};
  const errs: FieldError[] = [];
  validateGeneratedSelector(j, errs);
  validateJobSpec(isObj(j.spec) ? j.spec : {}, 'spec', errs);
  return errs;
}

/** Template fields upstream lets a suspended Job that never started change (mutable scheduling directives). */
const SCHEDULING_DIRECTIVES = ['nodeSelector', 'tolerations', 'affinity', 'schedulingGates'];

/** ValidateJobSpecUpdate: selector, completionMode, podFailurePolicy, and (mostly) template and completions are fixed. */
export function validateJobUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = isObj((next as Obj)?.spec) ? (next as Obj).spec : {};
  const o: Obj = isObj((prev as Obj)?.spec) ? (prev as Obj).spec : {};
  const errs: FieldError[] = [];
  errs.push(...validateImmutableField(n.selector, o.selector, 'spec.selector', labelSelectorRepr));
  const elastic = n.completionMode === 'Indexed' && o.completionMode === 'Indexed' && n.completions === n.parallelism && o.completions === o.parallelism;
  if (!elastic) errs.push(...validateImmutableField(n.completions, o.completions, 'spec.completions'));
  errs.push(...validateImmutableField(n.completionMode, o.completionMode, 'spec.completionMode'));
  errs.push(...validateImmutableField(n.podFailurePolicy, o.podFailurePolicy, 'spec.podFailurePolicy'));
  errs.push(...validateImmutableField(n.backoffLimitPerIndex, o.backoffLimitPerIndex, 'spec.backoffLimitPerIndex'));
  errs.push(...validateImmutableField(n.managedBy, o.managedBy, 'spec.managedBy'));
  const neverStarted = o.suspend === true && !(prev as Obj)?.status?.startTime;
  const strip = (t: unknown): unknown => {
    if (!neverStarted || !isObj(t)) return t;
    const c = structuredClone(t) as Obj;
    if (isObj(c.metadata)) { delete c.metadata.labels; delete c.metadata.annotations; }
    if (isObj(c.spec)) for (const f of SCHEDULING_DIRECTIVES) delete c.spec[f];
    return c;
  };
  errs.push(...validateImmutableField(strip(n.template), strip(o.template), 'spec.template', () => new GoRepr('core.PodTemplateSpec{...}')));
  return errs;
}

function validateSchedule(schedule: unknown, timeZone: unknown, path: string, errs: FieldError[]): void {
  if (typeof schedule !== 'string' || schedule === '') { errs.push(required(path, '')); return; }
  if (schedule.includes('TZ')) { errs.push(invalid(path, schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead')); return; }
  try { parseCronSchedule(schedule, typeof timeZone === 'string' && isValidTimeZone(timeZone) ? timeZone : undefined); } catch (err) { errs.push(invalid(path, schedule, (err as Error).message)); }
}

function validateTimeZone(tz: unknown, path: string, errs: FieldError[]): void {
  if (tz == null) return;
  if (typeof tz !== 'string' || tz === '') { errs.push(invalid(path, tz ?? '', 'timeZone must be nil or non-empty string')); return; }
  if (tz.toLowerCase() === 'local') { errs.push(invalid(path, tz, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones')); return; }
  if (!isValidTimeZone(tz)) errs.push(invalid(path, tz, `unknown time zone ${tz}`));
}

/** ValidateCronJobCreate / ValidateCronJobSpec. */
export function validateCronJob(cronJob: unknown): FieldError[] {
  const cj: Obj = isObj(cronJob) ? cronJob : {};
  const errs: FieldError[] = [];
  const name = String(cj.metadata?.name ?? '');
  if (name.length > CRONJOB_NAME_MAX_LENGTH) errs.push(invalid('metadata.name', name, `must be no more than ${CRONJOB_NAME_MAX_LENGTH} characters`));
  const spec: Obj = isObj(cj.spec) ? cj.spec : {};
  validateSchedule(spec.schedule, spec.timeZone, 'spec.schedule', errs);
  validateTimeZone(spec.timeZone, 'spec.timeZone', errs);
  errs.push(...validateNonnegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  if (!spec.concurrencyPolicy) errs.push(required('spec.concurrencyPolicy', ''));
  else if (!(CONCURRENCY_POLICIES as readonly string[]).includes(spec.concurrencyPolicy)) errs.push(notSupported('spec.concurrencyPolicy', spec.concurrencyPolicy, CONCURRENCY_POLICIES));
  errs.push(...validateNonnegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'));
  errs.push(...validateNonnegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  const jt: Obj = isObj(spec.jobTemplate) ? spec.jobTemplate : {};
  errs.push(...validateLabels(jt.metadata?.labels, 'spec.jobTemplate.metadata.labels'));
  errs.push(...validateAnnotations(jt.metadata?.annotations, 'spec.jobTemplate.metadata.annotations'));
  const js: Obj = isObj(jt.spec) ? jt.spec : {};
  if (js.manualSelector === true) errs.push(notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  validateJobSpecCommon(js, 'spec.jobTemplate.spec', errs);
  return errs;
}
