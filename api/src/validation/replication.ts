/**
 * core/v1 ReplicationController and PodTemplate validation, as upstream's
 * ValidateReplicationControllerSpec / ValidatePodTemplateSpecForRC / ValidatePodTemplate.
 * RC selectors are plain label maps (not LabelSelectors) and, unlike apps/v1, stay mutable.
 */
import { labelSelectorFromSet } from '../selectors/labels.js';
import { forbidden, invalid, notSupported, required, type FieldError } from './field.js';
import { validateLabels } from './meta.js';
import { validateNonnegative, validatePodTemplateSpec } from './pod.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** ValidateReplicationControllerSpec on an already defaulted RC. */
export function validateReplicationControllerSpec(rc: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isObj((rc as Obj)?.spec) ? (rc as Obj).spec : {};
  errs.push(...validateNonnegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  const selectorMap: Obj = isObj(spec.selector) ? spec.selector : {};
  if (Object.keys(selectorMap).length === 0) errs.push(required('spec.selector', ''));
  else errs.push(...validateLabels(selectorMap, 'spec.selector'));
  errs.push(...validateNonnegative(spec.replicas, 'spec.replicas'));
  const tpl = spec.template;
  if (!isObj(tpl)) {
    errs.push(required('spec.template', ''));
    return errs;
  }
  const labels: Obj = isObj(tpl.metadata?.labels) ? tpl.metadata.labels : {};
  if (Object.keys(selectorMap).length > 0) {
    let matches = false;
    try { matches = labelSelectorFromSet(selectorMap as Record<string, string>).matches(labels as Record<string, string>); } catch { /* bad labels reported above */ }
    if (!matches) errs.push(invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  }
  errs.push(...validatePodTemplateSpec(tpl, 'spec.template'));
  const rp = tpl.spec?.restartPolicy;
  if (rp !== undefined && rp !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  if (tpl.spec?.activeDeadlineSeconds !== undefined && tpl.spec?.activeDeadlineSeconds !== null) {
    errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicationController is not Supported'));
  }
  return errs;
}

/** ValidatePodTemplate: the template is a PodTemplateSpec at `template`. */
export function validatePodTemplateObject(pt: unknown): FieldError[] {
  const tpl = (pt as Obj)?.template;
  if (!isObj(tpl)) return [required('template', '')];
  return validatePodTemplateSpec(tpl, 'template');
}
