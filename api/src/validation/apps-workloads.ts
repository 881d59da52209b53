/**
 * apps/v1 DaemonSet, StatefulSet, ControllerRevision and policy/v1 PodDisruptionBudget validation,
 * as upstream's pkg/apis/apps/validation and pkg/apis/policy/validation (messages verbatim).
 */
import { child, forbidden, invalid, notSupported, required, type FieldError } from './field.js';
import { labelSelectorRepr, validateImmutableField, validateLabelSelector } from './meta.js';
import { validateNonnegative } from './pod.js';
import { validateSelectorAndTemplate } from './apps.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const specOf = (o: unknown): Obj => (isObj((o as Obj)?.spec) ? (o as Obj).spec : {});

const PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/** ValidatePositiveIntOrPercent plus IsNotMoreThan100Percent. */
function intOrPercent(v: unknown, path: string): FieldError[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') {
    if (!/^[0-9]+%$/.test(v)) return [invalid(path, v, PERCENT_MSG)];
    return parseInt(v, 10) > 100 ? [invalid(path, v, 'must not be greater than 100%')] : [];
  }
  return validateNonnegative(v, path);
}
const isZero = (v: unknown): boolean => v === undefined || v === null || v === 0 || (typeof v === 'string' && parseInt(v, 10) === 0);

/** ValidateDaemonSetSpec. */
export function validateDaemonSet(ds: unknown): FieldError[] {
  const spec = specOf(ds);
  const errs: FieldError[] = [];
  validateSelectorAndTemplate(spec, errs, 'daemonset');
  errs.push(...validateNonnegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateNonnegative(spec.templateGeneration, 'spec.templateGeneration'));
  errs.push(...validateNonnegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  const us: Obj = isObj(spec.updateStrategy) ? spec.updateStrategy : {};
  const path = 'spec.updateStrategy';
  if (us.type === 'RollingUpdate') {
    if (!isObj(us.rollingUpdate)) errs.push(required(child(path, 'rollingUpdate'), ''));
    else {
      const ru = us.rollingUpdate, rp = child(path, 'rollingUpdate');
      errs.push(...intOrPercent(ru.maxUnavailable, child(rp, 'maxUnavailable')), ...intOrPercent(ru.maxSurge, child(rp, 'maxSurge')));
      if (isZero(ru.maxUnavailable) && isZero(ru.maxSurge)) {
        errs.push(invalid(child(rp, 'maxUnavailable'), ru.maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
      }
    }
  } else if (us.type !== 'OnDelete') {
    errs.push(notSupported(child(path, 'type'), us.type ?? '', ['OnDelete', 'RollingUpdate']));
  }
  return errs;
}

/** ValidateDaemonSetUpdate: the selector is immutable. */
export function validateDaemonSetUpdate(next: unknown, prev: unknown): FieldError[] {
  return validateImmutableField(specOf(next).selector, specOf(prev).selector, 'spec.selector', labelSelectorRepr);
}

const POD_MANAGEMENT_POLICIES = ['OrderedReady', 'Parallel'];
const RETENTION = ['Retain', 'Delete'];

/** ValidateStatefulSetSpec. */
export function validateStatefulSet(sts: unknown): FieldError[] {
  const spec = specOf(sts);
  const errs: FieldError[] = [];
  if (!spec.podManagementPolicy) errs.push(required('spec.podManagementPolicy', ''));
  else if (!POD_MANAGEMENT_POLICIES.includes(spec.podManagementPolicy)) errs.push(notSupported('spec.podManagementPolicy', spec.podManagementPolicy, POD_MANAGEMENT_POLICIES));
  const us: Obj = isObj(spec.updateStrategy) ? spec.updateStrategy : {};
  const path = 'spec.updateStrategy';
  switch (us.type) {
    case 'OnDelete':
      if (us.rollingUpdate !== undefined && us.rollingUpdate !== null) errs.push(invalid(child(path, 'rollingUpdate'), us.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"));
      break;
    case 'RollingUpdate':
      if (isObj(us.rollingUpdate)) {
        const rp = child(path, 'rollingUpdate');
        errs.push(...validateNonnegative(us.rollingUpdate.partition, child(rp, 'partition')));
        const mu = us.rollingUpdate.maxUnavailable;
        if (mu !== undefined && mu !== null) {
          errs.push(...intOrPercent(mu, child(rp, 'maxUnavailable')));
          if (isZero(mu)) errs.push(invalid(child(rp, 'maxUnavailable'), mu, 'must be greater than 0'));
        }
      }
      break;
    case undefined: case '':
      errs.push(required(child(path, 'type'), ''));
      break;
    default:
      errs.push(invalid(child(path, 'type'), us.type, `must be 'RollingUpdate' or 'OnDelete'`));
  }
  const pvc: Obj = isObj(spec.persistentVolumeClaimRetentionPolicy) ? spec.persistentVolumeClaimRetentionPolicy : {};
  for (const f of ['whenDeleted', 'whenScaled']) {
    const v = pvc[f];
    if (v !== undefined && !RETENTION.includes(v)) errs.push(notSupported(child('spec.persistentVolumeClaimRetentionPolicy', f), v, RETENTION));
  }
  errs.push(...validateNonnegative(spec.replicas, 'spec.replicas'));
  errs.push(...validateNonnegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateNonnegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  if (isObj(spec.ordinals)) errs.push(...validateNonnegative(spec.ordinals.start, 'spec.ordinals.start'));
  const templates = Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : [];
  // The template is validated as the pods the controller makes from it: each claim template is a
  // volume of that name (replacing one the template may have), so containers may mount it.
  // (Upstream skips the template's pod spec validation for this reason.)
  const claimNames = templates.map((t: unknown) => (t as Obj)?.metadata?.name).filter((n: unknown): n is string => typeof n === 'string' && n !== '');
  const tpl: Obj = isObj(spec.template) ? spec.template : {};
  const asPod = claimNames.length === 0 || !isObj(tpl.spec) ? spec : {
    ...spec,
    template: { ...tpl, spec: { ...tpl.spec, volumes: [
      ...(Array.isArray(tpl.spec.volumes) ? tpl.spec.volumes.filter((v: unknown) => !claimNames.includes((v as Obj)?.name)) : []),
      ...claimNames.map((n: string) => ({ name: n, persistentVolumeClaim: { claimName: `${n}-${(sts as Obj)?.metadata?.name ?? 'x'}-0` } })),
    ] } },
  };
  validateSelectorAndTemplate(asPod, errs, 'statefulset');
  templates.forEach((t: unknown, i: number) => {
    const name = (t as Obj)?.metadata?.name;
    if (typeof name !== 'string' || !name) errs.push(required(`spec.volumeClaimTemplates[${i}].metadata.name`, 'name or generateName is required'));
  });
  return errs;
}

const STS_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

/** ValidateStatefulSetUpdate: only some spec fields may change. */
export function validateStatefulSetUpdate(next: unknown, prev: unknown): FieldError[] {
  const a = { ...specOf(next) }, b = { ...specOf(prev) };
  for (const f of STS_MUTABLE) { delete a[f]; delete b[f]; }
  if (JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b))) return [];
  return [forbidden('spec', "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")];
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isObj(v)) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
}

/** ValidateControllerRevision. */
export function validateControllerRevision(cr: unknown): FieldError[] {
  const o: Obj = isObj(cr) ? cr : {};
  const errs: FieldError[] = [];
  if (o.data === undefined || o.data === null) errs.push(required('data', ''));
  errs.push(...validateNonnegative(o.revision, 'revision'));
  return errs;
}

/** ValidateControllerRevisionUpdate: data is immutable. */
export function validateControllerRevisionUpdate(next: unknown, prev: unknown): FieldError[] {
  return validateImmutableField((next as Obj)?.data, (prev as Obj)?.data, 'data');
}

const UNHEALTHY_POD_EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

/** ValidatePodDisruptionBudgetSpec. */
export function validatePodDisruptionBudget(pdb: unknown): FieldError[] {
  const spec = specOf(pdb);
  const errs: FieldError[] = [];
  if (spec.minAvailable !== undefined && spec.minAvailable !== null && spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    errs.push(invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  errs.push(...intOrPercent(spec.minAvailable, 'spec.minAvailable'), ...intOrPercent(spec.maxUnavailable, 'spec.maxUnavailable'));
  if (spec.selector !== undefined && spec.selector !== null) errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const p = spec.unhealthyPodEvictionPolicy;
  if (p !== undefined && p !== null && !UNHEALTHY_POD_EVICTION_POLICIES.includes(p)) errs.push(notSupported('spec.unhealthyPodEvictionPolicy', p, UNHEALTHY_POD_EVICTION_POLICIES));
  return errs;
}
