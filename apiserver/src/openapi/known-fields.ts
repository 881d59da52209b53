/**
 * Strict field validation (fieldValidation=Strict|Warn): finds the fields of an object that its
 * kind's schema does not declare, the way upstream's strict JSON decoder reports them
 * (`spec.foo`, `spec.containers[0].imagePullPolicyy`).
 */
import type { ResourceDescriptor } from '@mk8s/api';
import { REF_PREFIX, kindSchemaName, lookupSchema, type Schema } from './schemas.js';

/** Resolves allOf/$ref wrappers to the referenced schema (properties next to them do not matter here). */
function resolve(s: Schema | undefined): Schema | undefined {
  let cur = s;
  for (let i = 0; cur && i < 16; i++) {
    const allOf = cur['allOf'];
    if (Array.isArray(allOf) && allOf.length > 0) { cur = allOf[0] as Schema; continue; }
    const r = cur['$ref'];
    if (typeof r === 'string' && r.startsWith(REF_PREFIX)) { cur = lookupSchema(r.slice(REF_PREFIX.length)); continue; }
    return cur;
  }
  return cur;
}

/**
 * Strategic-merge-patch directives: never fields, so a validator run over an SMP body (rather than
 * the patched result) must not report them.
 */
const isPatchDirective = (k: string): boolean =>
  k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/') || k.startsWith('$deleteFromPrimitiveList/');

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// The path is kept as parts and only turned into a string for an unknown field: most fields are
// known, and building every field's path string was most of the walk's cost on each write.
function walk(schema: Schema | undefined, value: unknown, path: (string | number)[], out: string[]): void {
  const s = resolve(schema);
  if (!s || s['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (Array.isArray(value)) {
    const items = s['items'] as Schema | undefined;
    if (!items) return;
    for (let i = 0; i < value.length; i++) { path.push(i); walk(items, value[i], path, out); path.pop(); }
    return;
  }
  if (!isPlainObject(value)) return;
  const props = s['properties'] as Record<string, Schema> | undefined;
  if (props) {
    for (const k in value) {
      if (isPatchDirective(k)) continue;
      const p = props[k];
      path.push(k);
      if (!p) out.push(pathString(path)); else walk(p, value[k], path, out);
      path.pop();
    }
    return;
  }
  const additional = s['additionalProperties'];
  if (additional && typeof additional === 'object') {
    for (const k in value) {
      if (isPatchDirective(k)) continue;
      path.push(k); walk(additional as Schema, value[k], path, out); path.pop();
    }
  }
}

/** `spec.containers[0].image` from its parts. */
function pathString(parts: (string | number)[]): string {
  let s = '';
  for (const p of parts) s = typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${p}` : p;
  return s;
}

/** Returns the unknown field paths of obj under schema name (exported for tests and other kinds). */
export function unknownFields(schemaName: string, obj: unknown): string[] {
  const out: string[] = [];
  walk(lookupSchema(schemaName), obj, [], out);
  return out;
}

/**
 * A validator for one resource's objects: returns the paths of fields its schema does not know,
 * in document order ([] when all are known, and always [] for kinds without a published schema).
 * The server turns them into `strict decoding error: unknown field "spec.foo", unknown field "…"`
 * (400 BadRequest) for fieldValidation=Strict, or Warning headers for Warn. Pure; safe to share.
 */
export function knownFieldsValidator(resource: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>): (obj: unknown) => string[] {
  const name = kindSchemaName(resource);
  if (!lookupSchema(name)) return () => [];
  return (obj) => unknownFields(name, obj);
}
