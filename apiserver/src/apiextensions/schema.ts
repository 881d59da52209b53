/**
 * Structural schemas (apiextensions.k8s.io/v1 openAPIV3Schema) applied to custom objects, as
 * upstream's apiextensions-apiserver does: pruning of unknown fields, defaulting, and validation
 * with upstream's field paths and messages. Validation runs on ajv (the schema is translated from
 * OpenAPI v3.0 to the JSON Schema ajv speaks: boolean exclusive bounds, nullable, int-or-string);
 * pruning and defaulting are walks of the schema. All pure.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { field, type FieldError } from '@mk8s/api';

/** JSONSchemaProps as a CRD carries it (the fields this server reads). */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  items?: JSONSchemaProps;
  additionalProperties?: JSONSchemaProps | boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  [k: string]: unknown;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const pathString = (parts: readonly (string | number)[]): string => {
  let s = '';
  for (const p of parts) s = typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${p}` : p;
  return s;
};

// ---- pruning ----

/**
 * Removes the fields the schema does not specify (upstream structural pruning) and returns their
 * paths in document order. apiVersion, kind and metadata at the root (and in embedded resources)
 * are always kept; `x-kubernetes-preserve-unknown-fields` keeps a node's unknown fields.
 */
export function prune(obj: unknown, schema: JSONSchemaProps | undefined): string[] {
  const out: string[] = [];
  pruneNode(obj, schema, [], out, true);
  return out;
}

/** The paths prune would remove, without changing obj (fieldValidation's unknown-field report). */
export function unknownFieldPaths(obj: unknown, schema: JSONSchemaProps | undefined): string[] {
  const out: string[] = [];
  pruneNode(obj, schema, [], out, true, true);
  return out;
}

function pruneNode(v: unknown, s: JSONSchemaProps | undefined, path: (string | number)[], out: string[], root: boolean, dry = false): void {
  if (!s) return;
  if (Array.isArray(v)) {
    if (!s.items) return;
    for (let i = 0; i < v.length; i++) { path.push(i); pruneNode(v[i], s.items, path, out, false, dry); path.pop(); }
    return;
  }
  if (!isObj(v)) return;
  const keepMeta = root || s['x-kubernetes-embedded-resource'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const props = s.properties;
  const additional = isObj(s.additionalProperties) ? s.additionalProperties as JSONSchemaProps : undefined;
  for (const k of Object.keys(v)) {
    if (keepMeta && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
    const p = props?.[k] ?? additional;
    path.push(k);
    if (p) pruneNode(v[k], p, path, out, false, dry);
    else if (!preserve && s.additionalProperties !== true) {
      out.push(pathString(path));
      if (!dry) delete v[k];
    }
    path.pop();
  }
}

// ---- defaulting ----

/** Fills absent fields that have a `default` (upstream structural defaulting), top-down. Mutates obj. */
export function applySchemaDefaults(obj: unknown, schema: JSONSchemaProps | undefined): void {
  if (!schema) return;
  if (Array.isArray(obj)) {
    if (schema.items) for (const x of obj) applySchemaDefaults(x, schema.items);
    return;
  }
  if (!isObj(obj)) return;
  if (schema.properties) {
    for (const [k, p] of Object.entries(schema.properties)) {
      if (p.default !== undefined && (obj[k] === undefined || (obj[k] === null && !p.nullable))) obj[k] = structuredClone(p.default);
      if (obj[k] !== undefined) applySchemaDefaults(obj[k], p);
    }
  }
  if (isObj(schema.additionalProperties)) {
    for (const k of Object.keys(obj)) if (!schema.properties?.[k]) applySchemaDefaults(obj[k], schema.additionalProperties as JSONSchemaProps);
  }
}

// ---- validation ----

/** Formats upstream validates; others are accepted as any string, as upstream ignores them. */
const KNOWN_FORMATS = new Set(['date', 'date-time', 'duration', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid', 'byte', 'int32', 'int64', 'float', 'double', 'password', 'cidr', 'mac']);
/** Upstream names date-time "datetime" in its messages. */
const FORMAT_NAMES: Record<string, string> = { 'date-time': 'datetime' };

/** OpenAPI v3.0 schema → the JSON Schema (2019 drafts' keywords) ajv validates with. */
export function toAjvSchema(s: JSONSchemaProps): Obj {
  const o: Obj = {};
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (s.type && !intOrString) o['type'] = s.nullable ? [s.type, 'null'] : s.type;
  if (intOrString) o['type'] = s.nullable ? ['integer', 'string', 'null'] : ['integer', 'string'];
  if (s.format && KNOWN_FORMATS.has(s.format) && (s.type === 'string' || !s.type)) o['format'] = s.format;
  if (s.enum) o['enum'] = s.nullable ? [...s.enum, null] : s.enum;
  if (s.minimum !== undefined) { if (s.exclusiveMinimum) o['exclusiveMinimum'] = s.minimum; else o['minimum'] = s.minimum; }
  if (s.maximum !== undefined) { if (s.exclusiveMaximum) o['exclusiveMaximum'] = s.maximum; else o['maximum'] = s.maximum; }
  for (const k of ['multipleOf', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'required'] as const) {
    if (s[k] !== undefined) o[k] = s[k];
  }
  if (s.properties) o['properties'] = Object.fromEntries(Object.entries(s.properties).map(([k, p]) => [k, toAjvSchema(p)]));
  if (s.items) o['items'] = toAjvSchema(s.items);
  if (isObj(s.additionalProperties)) o['additionalProperties'] = toAjvSchema(s.additionalProperties as JSONSchemaProps);
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = s[k];
    if (list) o[k] = list.map(toAjvSchema);
  }
  if (s.not) o['not'] = toAjvSchema(s.not);
  return o;
}

let sharedAjv: Ajv | undefined;
function ajv(): Ajv {
  if (sharedAjv) return sharedAjv;
  const a = new Ajv({ allErrors: true, strict: false, validateFormats: true });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
  addFormats(a);
  a.addFormat('cidr', /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\/(?:3[0-2]|[12]?\d)$|^[0-9a-fA-F:]+\/(?:12[0-8]|1[01]\d|\d?\d)$/);
  a.addFormat('mac', /^(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/);
  sharedAjv = a;
  return a;
}

/** How many schemas the shared ajv holds (tests: compiling must not grow it). */
export function cachedSchemaCount(): number {
  return (ajv() as unknown as { _cache: Map<unknown, unknown> })._cache.size;
}

/** A compiled validator: the FieldErrors of an object (empty when it is valid). */
export type SchemaValidator = (obj: unknown) => FieldError[];

/** The JSON type name upstream prints for a value in type errors. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function valueAt(root: unknown, parts: readonly (string | number)[]): unknown {
  let cur: unknown = root;
  for (const p of parts) cur = (cur as Record<string | number, unknown> | undefined)?.[p];
  return cur;
}

function partsOf(instancePath: string, root: unknown): (string | number)[] {
  if (!instancePath) return [];
  const out: (string | number)[] = [];
  let cur: unknown = root;
  for (const raw of instancePath.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const p: string | number = Array.isArray(cur) && /^\d+$/.test(seg) ? Number(seg) : seg;
    out.push(p);
    cur = (cur as Record<string | number, unknown> | undefined)?.[p];
  }
  return out;
}

/** One ajv error as upstream's kube-openapi validator reports the same failure. */
function toFieldError(e: ErrorObject, root: unknown): FieldError | undefined {
  const parts = partsOf(e.instancePath, root);
  const f = pathString(parts);
  const value = valueAt(root, parts);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': return field.required(f ? `${f}.${String(p['missingProperty'])}` : String(p['missingProperty']));
    case 'type': {
      const want = Array.isArray(p['type']) ? (p['type'] as string[]).filter((t) => t !== 'null').join(',') : String(p['type']);
      return field.invalid(f, jsonType(value), `${f} in body must be of type ${want}: "${jsonType(value)}"`);
    }
    case 'enum': return field.notSupported(f, value, (((e.params as { allowedValues?: unknown[] }).allowedValues) ?? []).filter((x) => x !== null).map((x) => (typeof x === 'string' ? x : JSON.stringify(x))));
    case 'maximum': return field.invalid(f, value, `${f} in body should be less than or equal to ${String(p['limit'])}`);
    case 'exclusiveMaximum': return field.invalid(f, value, `${f} in body should be less than ${String(p['limit'])}`);
    case 'minimum': return field.invalid(f, value, `${f} in body should be greater than or equal to ${String(p['limit'])}`);
    case 'exclusiveMinimum': return field.invalid(f, value, `${f} in body should be greater than ${String(p['limit'])}`);
    case 'multipleOf': return field.invalid(f, value, `${f} in body should be a multiple of ${String(p['multipleOf'])}`);
    case 'maxLength': return field.tooLong(f, value, Number(p['limit']));
    case 'minLength': return field.invalid(f, value, `${f} in body should be at least ${String(p['limit'])} chars long`);
    case 'pattern': return field.invalid(f, value, `${f} in body should match '${String(p['pattern'])}'`);
    case 'format': return field.invalid(f, value, `${f} in body must be of type ${FORMAT_NAMES[String(p['format'])] ?? String(p['format'])}: ${JSON.stringify(value)}`);
    case 'maxItems': return field.tooMany(f, Array.isArray(value) ? value.length : 0, Number(p['limit']));
    case 'minItems': return field.invalid(f, value, `${f} in body should have at least ${String(p['limit'])} items`);
    case 'uniqueItems': return field.duplicate(`${f}[${String(p['j'])}]`, Array.isArray(value) ? value[Number(p['j'])] : value);
    case 'maxProperties': return field.tooMany(f, isObj(value) ? Object.keys(value).length : 0, Number(p['limit']));
    case 'minProperties': return field.invalid(f, value, `${f} in body should have at least ${String(p['limit'])} properties`);
    case 'anyOf': case 'oneOf': case 'not': case 'allOf':
      return field.invalid(f, value, `${f} in body must validate ${e.keyword === 'not' ? 'not' : e.keyword === 'allOf' ? 'all' : e.keyword === 'anyOf' ? 'at least one' : 'one and only one'} schema${e.keyword === 'not' ? '' : ' (' + e.keyword + ')'}`);
    default: return field.invalid(f, value, e.message ?? 'invalid');
  }
}

/**
 * Compiles a structural schema. The root's apiVersion, kind and metadata are checked by the
 * object's own validation, not the schema (upstream validates ObjectMeta separately).
 */
export function compileSchema(schema: JSONSchemaProps | undefined): SchemaValidator {
  if (!schema) return () => [];
  const root = toAjvSchema(schema);
  const props = root['properties'] as Obj | undefined;
  if (props) {
    delete props['metadata']; delete props['apiVersion']; delete props['kind'];
  }
  const fn: ValidateFunction = ajv().compile(root);
  // The shared ajv keeps every compiled schema in a Map keyed by the schema object; each CRD
  // (re)build compiles a fresh one, so drop it: the compiled function does not need the cache.
  ajv().removeSchema(root);
  return (obj) => {
    if (fn(obj)) return [];
    const out: FieldError[] = [];
    const seen = new Set<string>();
    for (const e of fn.errors ?? []) {
      // anyOf/oneOf report their branches' errors too; keep the summary only.
      if ((fn.errors ?? []).some((o) => o !== e && (o.keyword === 'anyOf' || o.keyword === 'oneOf') && e.schemaPath.startsWith(o.schemaPath + '/'))) continue;
      const fe = toFieldError(e, obj);
      if (fe && !seen.has(fe.message)) { seen.add(fe.message); out.push(fe); }
    }
    return out;
  };
}

// ---- structural checks of the schema itself (CRD validation) ----

/**
 * The rules that make a schema structural, as far as this server needs them: a type on every
 * node (but int-or-string and preserve-unknown-fields ones), an object root, metadata
 * restricted to name and generateName. Field paths are relative to `base`.
 */
export function structuralErrors(schema: JSONSchemaProps, base: string): FieldError[] {
  const errs: FieldError[] = [];
  const walk = (s: JSONSchemaProps, path: string, isRootOrProperty: boolean) => {
    const untyped = s['x-kubernetes-int-or-string'] === true || s['x-kubernetes-preserve-unknown-fields'] === true;
    if (!s.type && !untyped && isRootOrProperty) errs.push(field.required(`${path}.type`, 'must not be empty for specified object fields'));
    if (s.type && !['object', 'array', 'string', 'integer', 'number', 'boolean'].includes(s.type)) {
      errs.push(field.notSupported(`${path}.type`, s.type, ['array', 'boolean', 'integer', 'number', 'object', 'string']));
    }
    if (s.type === 'array' && !s.items) errs.push(field.required(`${path}.items`, 'must be specified'));
    if (s.properties && isObj(s.additionalProperties)) errs.push(field.forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    if (s.pattern !== undefined) {
      try { new RegExp(s.pattern, 'u'); } catch { errs.push(field.invalid(`${path}.pattern`, s.pattern, 'must be a valid regular expression')); }
    }
    for (const [k, p] of Object.entries(s.properties ?? {})) walk(p, `${path}.properties[${k}]`, true);
    if (s.items) walk(s.items, `${path}.items`, true);
    if (isObj(s.additionalProperties)) walk(s.additionalProperties as JSONSchemaProps, `${path}.additionalProperties`, true);
  };
  walk(schema, base, true);
  if (schema.type !== undefined && schema.type !== 'object') errs.push(field.invalid(`${base}.type`, schema.type, 'must be object at the root'));
  const meta = schema.properties?.['metadata'];
  if (meta?.properties) {
    for (const k of Object.keys(meta.properties)) {
      if (k !== 'name' && k !== 'generateName') errs.push(field.forbidden(`${base}.properties[metadata].properties[${k}]`, 'must not be specified'));
    }
  }
  return errs;
}
