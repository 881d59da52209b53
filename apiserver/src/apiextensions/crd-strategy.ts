/**
 * The CustomResourceDefinition strategy (upstream apiextensions registry/customresourcedefinition):
 * defaulting, validation of names, versions, schemas, subresources and printer columns, storedVersions,
 * and deletion through the cleanup finalizer (the CRD stays, Terminating, until its objects are gone).
 */
import { field, isDNS1035Label, isDNS1123Subdomain, type FieldError, type KubeObject } from '@mk8s/api';
import type { RestStrategy, StrategyContext } from '../registry/generic/strategy.js';
import { metaOf } from '../registry/generic/strategy.js';
import { formatTime } from '../registry/generic/names.js';
import { structuralErrors } from './schema.js';
import { ruleCompileErrors } from './cel.js';
import { CLEANUP_FINALIZER, CustomResourceDefinitions, storageVersionOf, type Crd, type CrdCondition, type CrdVersion } from './types.js';

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];

/** SetDefaults_CustomResourceDefinition: singular, listKind, conversion None. Mutates crd. */
export function defaultCrd(crd: Crd): Crd {
  const spec = crd.spec;
  if (!spec || typeof spec !== 'object') return crd;
  const names = spec.names;
  if (names && typeof names === 'object') {
    if (!names.singular && names.kind) names.singular = names.kind.toLowerCase();
    if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
  }
  if (!spec.conversion) spec.conversion = { strategy: 'None' };
  return crd;
}

/** ValidateCustomResourceDefinition (the rules this server enforces), upstream's paths and messages. */
export function validateCrd(crd: Crd): FieldError[] {
  const errs: FieldError[] = [];
  const spec = crd.spec;
  if (!spec || typeof spec !== 'object') return [field.required('spec')];
  const name = crd.metadata?.name ?? '';
  const names = spec.names ?? ({} as Crd['spec']['names']);
  if (name !== `${names.plural}.${spec.group}`) errs.push(field.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  if (!spec.group) errs.push(field.required('spec.group'));
  else {
    for (const m of isDNS1123Subdomain(spec.group)) errs.push(field.invalid('spec.group', spec.group, m));
    if (!spec.group.includes('.')) errs.push(field.invalid('spec.group', spec.group, 'should be a domain with at least one dot'));
  }
  if (!spec.scope) errs.push(field.required('spec.scope'));
  else if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') errs.push(field.notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  errs.push(...validateNames(names, 'spec.names'));
  const strategy = spec.conversion?.strategy ?? 'None';
  if (strategy !== 'None' && strategy !== 'Webhook') errs.push(field.notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0) errs.push(field.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  else {
    if (versions.filter((v) => v.storage).length !== 1) errs.push(field.invalid('spec.versions', versions.map((v) => v.name), 'must have exactly one version marked as storage version'));
    if (!versions.some((v) => v.served)) errs.push(field.invalid('spec.versions', versions.map((v) => v.name), 'must have at least one version marked as served'));
  }
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const base = `spec.versions[${i}]`;
    if (!v.name) errs.push(field.required(`${base}.name`));
    else {
      for (const m of isDNS1035Label(v.name)) errs.push(field.invalid(`${base}.name`, v.name, m));
      if (seen.has(v.name)) errs.push(field.duplicate(`${base}.name`, v.name));
      seen.add(v.name);
    }
    errs.push(...validateVersion(v, base));
  });
  return errs;
}

function validateNames(names: Crd['spec']['names'], base: string): FieldError[] {
  const errs: FieldError[] = [];
  const label = (f: string, v: string | undefined, required: boolean) => {
    if (!v) { if (required) errs.push(field.required(`${base}.${f}`)); return; }
    for (const m of isDNS1035Label(v)) errs.push(field.invalid(`${base}.${f}`, v, m));
  };
  label('plural', names.plural, true);
  label('singular', names.singular, false);
  if (!names.kind) errs.push(field.required(`${base}.kind`));
  else if (!/^[A-Za-z][A-Za-z0-9]*$/.test(names.kind)) errs.push(field.invalid(`${base}.kind`, names.kind, 'may have mixed case, but should otherwise match: ^[a-z]([-a-z0-9]*[a-z0-9])?$'));
  if (names.listKind && names.kind && names.listKind === names.kind) errs.push(field.invalid(`${base}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  (names.shortNames ?? []).forEach((s, i) => { for (const m of isDNS1035Label(s)) errs.push(field.invalid(`${base}.shortNames[${i}]`, s, m)); });
  (names.categories ?? []).forEach((s, i) => { for (const m of isDNS1035Label(s)) errs.push(field.invalid(`${base}.categories[${i}]`, s, m)); });
  return errs;
}

function validateVersion(v: CrdVersion, base: string): FieldError[] {
  const errs: FieldError[] = [];
  const schema = v.schema?.openAPIV3Schema;
  if (!schema) errs.push(field.required(`${base}.schema.openAPIV3Schema`, 'schemas are required'));
  else errs.push(...structuralErrors(schema, `${base}.schema.openAPIV3Schema`), ...ruleCompileErrors(schema, `${base}.schema.openAPIV3Schema`));
  const scale = v.subresources?.scale;
  if (scale) {
    const sb = `${base}.subresources.scale`;
    if (!scale.specReplicasPath) errs.push(field.required(`${sb}.specReplicasPath`));
    else if (!scale.specReplicasPath.startsWith('.spec.')) errs.push(field.invalid(`${sb}.specReplicasPath`, scale.specReplicasPath, 'should be a json path under .spec'));
    if (!scale.statusReplicasPath) errs.push(field.required(`${sb}.statusReplicasPath`));
    else if (!scale.statusReplicasPath.startsWith('.status.')) errs.push(field.invalid(`${sb}.statusReplicasPath`, scale.statusReplicasPath, 'should be a json path under .status'));
    if (scale.labelSelectorPath && !/^\.(spec|status)\./.test(scale.labelSelectorPath)) errs.push(field.invalid(`${sb}.labelSelectorPath`, scale.labelSelectorPath, 'should be a json path under either .spec or .status'));
  }
  (v.additionalPrinterColumns ?? []).forEach((c, i) => {
    const cb = `${base}.additionalPrinterColumns[${i}]`;
    if (!c.name) errs.push(field.required(`${cb}.name`));
    if (!c.type) errs.push(field.required(`${cb}.type`));
    else if (!COLUMN_TYPES.includes(c.type)) errs.push(field.notSupported(`${cb}.type`, c.type, COLUMN_TYPES));
    if (!c.jsonPath) errs.push(field.required(`${cb}.jsonPath`));
    if (c.priority !== undefined && c.priority < 0) errs.push(field.invalid(`${cb}.priority`, c.priority, 'must be greater than or equal to 0'));
  });
  return errs;
}

/** Update rules: group and scope are immutable (upstream's ValidateCustomResourceDefinitionUpdate, in part). */
export function validateCrdUpdate(next: Crd, prev: Crd): FieldError[] {
  const errs = validateCrd(next);
  if (next.spec?.group !== prev.spec?.group) errs.push(field.invalid('spec.group', next.spec?.group, 'field is immutable'));
  if (next.spec?.scope !== prev.spec?.scope) errs.push(field.invalid('spec.scope', next.spec?.scope, 'field is immutable'));
  return errs;
}

/** status.storedVersions keeps every version ever used for storage, plus the current one. */
function withStoredVersion(crd: Crd, prevStored: readonly string[] = []): void {
  const storage = storageVersionOf(crd);
  const stored = [...prevStored];
  if (storage && !stored.includes(storage)) stored.push(storage);
  crd.status = { ...(crd.status ?? {}), storedVersions: stored };
}

/** Sets (or replaces) a condition, keeping lastTransitionTime when the status does not change. */
export function setCondition(conditions: readonly CrdCondition[] | undefined, c: CrdCondition, now: Date): CrdCondition[] {
  const out = [...(conditions ?? [])];
  const i = out.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? out[i] : undefined;
  const next: CrdCondition = { ...c, lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : formatTime(now.getTime()) };
  if (i >= 0) out[i] = next; else out.push(next);
  return out;
}

export const crdStrategy: RestStrategy = {
  resource: CustomResourceDefinitions,
  statusSubresource: true,
  prepareForCreate(obj: KubeObject) {
    const crd = defaultCrd(obj as Crd);
    delete crd.status;
    withStoredVersion(crd);
  },
  prepareForUpdate(next: KubeObject, prev: KubeObject) {
    const crd = defaultCrd(next as Crd);
    crd.status = structuredClone((prev as Crd).status ?? {});
    withStoredVersion(crd, (prev as Crd).status?.storedVersions);
  },
  prepareForStatusUpdate(next: KubeObject, prev: KubeObject) {
    const crd = next as Crd;
    // storedVersions can shrink (storage migration) but the current storage version stays.
    withStoredVersion(crd, crd.status?.storedVersions ?? (prev as Crd).status?.storedVersions);
  },
  validate: (obj) => validateCrd(obj as Crd),
  validateUpdate: (next, prev) => validateCrdUpdate(next as Crd, prev as Crd),
  /**
   * Deleting a CRD first marks it: the cleanup finalizer holds it (Terminating) while the server
   * deletes its objects; the last step removes the finalizer and the CRD goes.
   */
  markForDeletion(obj: KubeObject, ctx: StrategyContext) {
    const m = metaOf(obj);
    if (m.deletionTimestamp) return 'unchanged';
    m.deletionTimestamp = formatTime(ctx.now.getTime());
    m.deletionGracePeriodSeconds = 0;
    m.finalizers = [...new Set([...(m.finalizers ?? []), CLEANUP_FINALIZER])];
    const crd = obj as Crd;
    crd.status = { ...(crd.status ?? {}), conditions: setCondition(crd.status?.conditions, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' }, ctx.now) };
    return obj;
  },
};
