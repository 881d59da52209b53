/**
 * Field selectors: `?fieldSelector=` parsing (apimachinery pkg/fields) and the per-resource
 * selectable fields (each registry's ToSelectableFields + field label conversion funcs).
 */
import { ApiError } from '../errors.js';
import type { ResourceDescriptor } from '../scheme.js';
import { parseLabelSelector, type ParsedLabelSelector } from './labels.js';

export type FieldOperator = '=' | '==' | '!=';

export interface FieldRequirement { readonly field: string; readonly operator: FieldOperator; readonly value: string }

/** A compiled field selector: an AND of equality / inequality terms. Immutable. */
export interface ParsedFieldSelector {
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;
  /** Missing fields read as '' (upstream fields.Set.Get). */
  matches(fields: Readonly<Record<string, string>>): boolean;
  /** Canonical form: terms sorted, `==` written as `=`, values escaped. */
  toString(): string;
  /** The value demanded for field by an `=`/`==` term, if any (lets storage narrow a list). */
  requiresExactMatch(field: string): string | undefined;
}

const escapeValue = (v: string): string => v.replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/=/g, '\\=');

class FieldSelector implements ParsedFieldSelector {
  constructor(readonly requirements: readonly FieldRequirement[]) {}
  get empty(): boolean { return this.requirements.length === 0; }
  matches(fields: Readonly<Record<string, string>>): boolean {
    return this.requirements.every((r) => {
      const v = fields[r.field] ?? '';
      return r.operator === '!=' ? v !== r.value : v === r.value;
    });
  }
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator === '!=' ? '!=' : '='}${escapeValue(r.value)}`).join(',');
  }
  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator !== '!=')?.value;
  }
}

/** Splits on unescaped commas, keeping escapes for the value unescaper. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let cur = ''; let esc = false;
  for (const ch of s) {
    if (esc) { cur += ch; esc = false; continue; }
    if (ch === '\\') { cur += ch; esc = true; continue; }
    if (ch === ',') { out.push(cur); cur = ''; continue; }
    cur += ch;
  }
  out.push(cur);
  return out;
}

function unescapeValue(v: string): string {
  let out = ''; let esc = false;
  for (const ch of v) {
    if (esc) {
      if (ch !== '\\' && ch !== ',' && ch !== '=') throw new ApiError('BadRequest', `invalid field selector: invalid escape sequence: \\${ch}`);
      out += ch; esc = false; continue;
    }
    if (ch === '\\') { esc = true; continue; }
    if (ch === ',' || ch === '=') throw new ApiError('BadRequest', `invalid field selector: unescaped ${ch} in value`);
    out += ch;
  }
  if (esc) throw new ApiError('BadRequest', 'invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Finds the first unescaped operator, trying `!=`, `==`, `=` at each position (upstream splitTerm). */
function splitTerm(term: string): [string, FieldOperator, string] | undefined {
  let esc = false;
  for (let i = 0; i < term.length; i++) {
    if (esc) { esc = false; continue; }
    if (term[i] === '\\') { esc = true; continue; }
    for (const op of ['!=', '==', '='] as const) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

/**
 * Parses a `fieldSelector` query value (comma = AND). '' matches everything. Does not check the
 * field names; see validateFieldSelector / fieldSelectorFor.
 * @throws ApiError BadRequest on syntax errors, with upstream's message.
 */
export function parseFieldSelector(s: string): ParsedFieldSelector {
  if (s.trim() === '') return new FieldSelector([]);
  const parts = splitTerms(s).sort();
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const t = splitTerm(part);
    if (!t) throw new ApiError('BadRequest', `invalid selector: '${s}'; can't understand '${part}'`);
    reqs.push({ field: t[0], operator: t[1], value: unescapeValue(t[2]) });
  }
  return new FieldSelector(reqs);
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

/** Resource-specific selectable fields (besides metadata.name/namespace), keyed by `group/resource`. */
const SPECIFIC: Record<string, (o: Obj) => Record<string, string>> = {
  '/pods': (o) => ({
    'spec.nodeName': str(o.spec?.nodeName),
    'spec.restartPolicy': str(o.spec?.restartPolicy),
    'spec.schedulerName': str(o.spec?.schedulerName),
    'spec.serviceAccountName': str(o.spec?.serviceAccountName),
    'spec.hostNetwork': String(o.spec?.hostNetwork === true),
    'status.phase': str(o.status?.phase),
    // Upstream reads podIPs[0], not the legacy podIP field.
    'status.podIP': str(o.status?.podIPs?.[0]?.ip ?? o.status?.podIP),
    'status.nominatedNodeName': str(o.status?.nominatedNodeName),
  }),
  '/events': (o) => ({
    'involvedObject.kind': str(o.involvedObject?.kind),
    'involvedObject.namespace': str(o.involvedObject?.namespace),
    'involvedObject.name': str(o.involvedObject?.name),
    'involvedObject.uid': str(o.involvedObject?.uid),
    'involvedObject.apiVersion': str(o.involvedObject?.apiVersion),
    'involvedObject.resourceVersion': str(o.involvedObject?.resourceVersion),
    'involvedObject.fieldPath': str(o.involvedObject?.fieldPath),
    reason: str(o.reason),
    reportingComponent: str(o.reportingComponent),
    source: str(o.source?.component),
    type: str(o.type),
  }),
  // events.k8s.io/v1: the same objects under their v1 names (upstream's field label conversion).
  'events.k8s.io/events': (o) => ({
    'regarding.kind': str(o.regarding?.kind),
    'regarding.namespace': str(o.regarding?.namespace),
    'regarding.name': str(o.regarding?.name),
    'regarding.uid': str(o.regarding?.uid),
    'regarding.apiVersion': str(o.regarding?.apiVersion),
    'regarding.resourceVersion': str(o.regarding?.resourceVersion),
    'regarding.fieldPath': str(o.regarding?.fieldPath),
    reason: str(o.reason),
    reportingController: str(o.reportingController),
    type: str(o.type),
  }),
  '/secrets': (o) => ({ type: str(o.type) }),
  '/nodes': (o) => ({ 'spec.unschedulable': String(o.spec?.unschedulable === true) }),
  '/namespaces': (o) => ({ 'status.phase': str(o.status?.phase) }),
  'apps/replicasets': (o) => ({ 'status.replicas': String(o.status?.replicas ?? 0) }),
  'batch/jobs': (o) => ({ 'status.successful': String(o.status?.succeeded ?? 0) }),
  'certificates.k8s.io/certificatesigningrequests': (o) => ({ 'spec.signerName': str(o.spec?.signerName) }),
};

const specificOf = (r: Pick<ResourceDescriptor, 'group' | 'resource'>) => SPECIFIC[`${r.group}/${r.resource}`];

/**
 * The selectable fields of obj, as upstream's <Kind>ToSelectableFields: metadata.name and
 * metadata.namespace (namespaced resources; '' otherwise) plus the resource's own.
 */
export function fieldsOf(resource: Pick<ResourceDescriptor, 'group' | 'resource' | 'namespaced'>, obj: unknown): Record<string, string> {
  const o = (obj ?? {}) as Obj;
  const out: Record<string, string> = {
    'metadata.name': str(o.metadata?.name),
    'metadata.namespace': resource.namespaced ? str(o.metadata?.namespace) : '',
  };
  const extra = specificOf(resource);
  return extra ? { ...out, ...extra(o) } : out;
}

/** The field names a resource's selectors may use. */
export function selectableFields(resource: Pick<ResourceDescriptor, 'group' | 'resource' | 'namespaced'>): string[] {
  return Object.keys(fieldsOf(resource, {}));
}

/**
 * Rejects fields the resource cannot select on. Resources with their own conversion func say
 * `field label not supported: X`; the others use the apimachinery default's message.
 * @throws ApiError BadRequest
 */
export function validateFieldSelector(resource: Pick<ResourceDescriptor, 'group' | 'resource' | 'namespaced'>, sel: ParsedFieldSelector): void {
  const allowed = new Set(selectableFields(resource));
  for (const r of sel.requirements) {
    if (allowed.has(r.field)) continue;
    throw new ApiError('BadRequest', specificOf(resource)
      ? `field label not supported: ${r.field}`
      : `"${r.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
  }
}

/** parseFieldSelector + validateFieldSelector. */
export function parseFieldSelectorFor(resource: Pick<ResourceDescriptor, 'group' | 'resource' | 'namespaced'>, s: string): ParsedFieldSelector {
  const sel = parseFieldSelector(s);
  validateFieldSelector(resource, sel);
  return sel;
}

/** A storage.SelectionPredicate: label and field selector over one resource's objects. */
export interface SelectionPredicate {
  readonly label: ParsedLabelSelector;
  readonly field: ParsedFieldSelector;
  /** True when neither selector restricts anything. */
  readonly empty: boolean;
  matches(obj: unknown): boolean;
}

/**
 * Builds the predicate for a list/watch request from its query values.
 * @throws ApiError BadRequest for either selector being malformed or naming an unsupported field.
 */
export function selectionPredicate(resource: Pick<ResourceDescriptor, 'group' | 'resource' | 'namespaced'>,
  q: { labelSelector?: string | undefined; fieldSelector?: string | undefined }): SelectionPredicate {
  const label = parseLabelSelector(q.labelSelector ?? '');
  const field = parseFieldSelectorFor(resource, q.fieldSelector ?? '');
  return {
    label, field, empty: label.empty && field.empty,
    matches(obj: unknown): boolean {
      if (!label.empty && !label.matches((obj as Obj | undefined)?.metadata?.labels)) return false;
      return field.empty || field.matches(fieldsOf(resource, obj));
    },
  };
}
