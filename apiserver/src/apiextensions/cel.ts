/**
 * x-kubernetes-validations: CEL rules on schema nodes, evaluated with @bufbuild/cel as upstream's
 * apiextensions validator does: `self` is the node's value (integers as int, objects as maps),
 * `oldSelf` the previous value on updates (transition rules are skipped without one), `message` or
 * `messageExpression` or `failed rule: <rule>` reported at the node's path (plus `fieldPath`), with
 * `reason` choosing the error type. Rules are parsed and planned once per schema.
 */
import { celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { field, type FieldError } from '@mk8s/api';
import type { JSONSchemaProps } from './schema.js';

export interface ValidationRule { rule: string; message?: string; messageExpression?: string; reason?: string; fieldPath?: string; optionalOldSelf?: boolean }

type Planned = (ctx: Record<string, unknown>) => unknown;
const env = celEnv({ funcs: strings });
const planned = new Map<string, Planned | Error>();

function compile(expr: string): Planned | Error {
  let p = planned.get(expr);
  if (!p) {
    try { p = plan(env, parse(expr)) as unknown as Planned; } catch (err) { p = err instanceof Error ? err : new Error(String(err)); }
    planned.set(expr, p);
  }
  return p;
}

/** Rules that do not parse (CRD validation reports them). */
export function ruleCompileErrors(schema: JSONSchemaProps | undefined, base: string): FieldError[] {
  const errs: FieldError[] = [];
  const walk = (s: JSONSchemaProps | undefined, path: string) => {
    if (!s) return;
    ((s['x-kubernetes-validations'] as ValidationRule[] | undefined) ?? []).forEach((r, i) => {
      const c = compile(r.rule);
      if (c instanceof Error) errs.push(field.invalid(`${path}.x-kubernetes-validations[${i}].rule`, r.rule, `compilation failed: ${c.message}`));
    });
    for (const [k, p] of Object.entries(s.properties ?? {})) walk(p, `${path}.properties[${k}]`);
    if (s.items) walk(s.items, `${path}.items`);
    if (s.additionalProperties && typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${path}.additionalProperties`);
  };
  walk(schema, base);
  return errs;
}

/** A JSON value as CEL sees it under its schema. */
function toCel(v: unknown, s: JSONSchemaProps | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map((x) => toCel(x, s?.items));
  if (typeof v === 'object') {
    const m = new Map<string, unknown>();
    const extra = s?.additionalProperties && typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    for (const [k, x] of Object.entries(v)) m.set(k, toCel(x, s?.properties?.[k] ?? extra));
    return m;
  }
  if (typeof v === 'number' && (s?.type === 'integer' || (s?.['x-kubernetes-int-or-string'] && Number.isInteger(v)))) return BigInt(v);
  return v;
}

const typeName = (s: JSONSchemaProps): string => s.type ?? (s['x-kubernetes-int-or-string'] ? 'integer-or-string' : 'object');

function report(r: ValidationRule, path: string, s: JSONSchemaProps, message: string): FieldError {
  const at = r.fieldPath ? `${path}${r.fieldPath.startsWith('.') || r.fieldPath.startsWith('[') ? '' : '.'}${r.fieldPath}` : path;
  switch (r.reason) {
    case 'FieldValueRequired': return field.required(at, message);
    case 'FieldValueForbidden': return field.forbidden(at, message);
    case 'FieldValueDuplicate': return { ...field.duplicate(at, typeName(s)), message: `${at}: Duplicate value: ${message}` };
    default: return field.invalid(at, typeName(s), message);
  }
}

/** Every failed rule of obj (old: the stored object on update). */
export function celErrors(obj: unknown, old: unknown, schema: JSONSchemaProps | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const walk = (v: unknown, o: unknown, s: JSONSchemaProps | undefined, path: string) => {
    if (!s || v === undefined || v === null) return;
    for (const r of (s['x-kubernetes-validations'] as ValidationRule[] | undefined) ?? []) {
      const transition = /\boldSelf\b/.test(r.rule);
      if (transition && (o === undefined || o === null) && !r.optionalOldSelf) continue;
      const c = compile(r.rule);
      if (c instanceof Error) continue;
      const ctx: Record<string, unknown> = { self: toCel(v, s) };
      if (transition) ctx['oldSelf'] = toCel(o, s);
      const res = c(ctx);
      if (res === true) continue;
      let message = r.message ?? `failed rule: ${r.rule}`;
      if (isCelError(res)) message = `${r.rule}: ${String((res as Error).message)}`;
      else if (r.messageExpression) {
        const m = compile(r.messageExpression);
        if (!(m instanceof Error)) { const out = m(ctx); if (typeof out === 'string' && out) message = out; }
      }
      errs.push(report(r, path || '<root>', s, message));
    }
    if (Array.isArray(v)) { v.forEach((x, i) => walk(x, undefined, s.items, `${path}[${i}]`)); return; }
    if (typeof v === 'object') {
      const extra = s.additionalProperties && typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const p = s.properties?.[k] ?? extra;
        if (!p) continue;
        walk(x, o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined, p, path ? (s.properties?.[k] ? `${path}.${k}` : `${path}[${k}]`) : k);
      }
    }
  };
  walk(obj, old, schema, '');
  return errs;
}
