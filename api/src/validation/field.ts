/**
 * Field errors as upstream's apimachinery util/validation/field: a typed error at a field path
 * whose `message` is exactly what upstream's `field.Error.Error()` prints, e.g.
 * `spec.replicas: Invalid value: -1: must be greater than or equal to 0`.
 */

export type FieldErrorType =
  | 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueDuplicate' | 'FieldValueNotSupported'
  | 'FieldValueForbidden' | 'FieldValueTooLong' | 'FieldValueNotFound' | 'FieldValueTooMany' | 'InternalError';

/** One validation failure. `message` is the full upstream text including the field path. */
export interface FieldError {
  type: FieldErrorType;
  /** Dotted path as upstream prints it: `spec.containers[0].name`, `metadata.labels`. */
  field: string;
  message: string;
  value?: unknown;
  /** The detail alone (message without `field: Type: value:`). */
  detail?: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value', FieldValueInvalid: 'Invalid value', FieldValueDuplicate: 'Duplicate value',
  FieldValueNotSupported: 'Unsupported value', FieldValueForbidden: 'Forbidden', FieldValueTooLong: 'Too long',
  FieldValueNotFound: 'Not found', FieldValueTooMany: 'Too many', InternalError: 'Internal error',
};

/** A value pre-rendered the way Go's %#v would print it (for structs we cannot infer). */
export class GoRepr { constructor(readonly text: string) {} }

/**
 * Renders a bad value as upstream's ErrorBody does: strings %q, numbers and booleans plain,
 * null for nil, maps/slices of strings in Go %#v syntax.
 */
export function goValue(v: unknown): string {
  if (v instanceof GoRepr) return v.text;
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === 'string')) return `[]string{${v.map(goQuote).join(', ')}}`;
    if (v.every((x) => typeof x === 'number')) return `[]int32{${v.join(', ')}}`;
    return `[]interface {}{${v.map(goValue).join(', ')}}`;
  }
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (entries.every(([, x]) => typeof x === 'string')) {
      return `map[string]string{${entries.map(([k, x]) => `${goQuote(k)}:${goQuote(x as string)}`).join(', ')}}`;
    }
    return `map[string]interface {}{${entries.map(([k, x]) => `${goQuote(k)}:${goValue(x)}`).join(', ')}}`;
  }
  return String(v);
}

/** Go's %q for the common cases (JSON escaping matches it for printable text). */
export function goQuote(s: string): string { return JSON.stringify(s); }

function make(type: FieldErrorType, field: string, detail: string, value?: unknown, withValue = false): FieldError {
  let body = TYPE_TEXT[type];
  if (withValue) body += `: ${goValue(value)}`;
  if (detail) body += `: ${detail}`;
  const e: FieldError = { type, field, message: `${field}: ${body}` };
  if (value !== undefined) e.value = value;
  if (detail) e.detail = detail;
  return e;
}

/** field.Required */
export const required = (field: string, detail = ''): FieldError => make('FieldValueRequired', field, detail);
/** field.Invalid */
export const invalid = (field: string, value: unknown, detail: string): FieldError => make('FieldValueInvalid', field, detail, value, true);
/** field.Duplicate */
export const duplicate = (field: string, value: unknown): FieldError => make('FieldValueDuplicate', field, '', value, true);
/** field.NotFound */
export const notFound = (field: string, value: unknown): FieldError => make('FieldValueNotFound', field, '', value, true);
/** field.Forbidden */
export const forbidden = (field: string, detail: string): FieldError => make('FieldValueForbidden', field, detail);
/** field.NotSupported: `Unsupported value: "x": supported values: "a", "b"`. */
export const notSupported = (field: string, value: unknown, valid: readonly string[]): FieldError =>
  make('FieldValueNotSupported', field, valid.length ? `supported values: ${valid.map(goQuote).join(', ')}` : '', value, true);
/** field.TooLong with a byte limit. */
export const tooLong = (field: string, value: unknown, maxLength: number): FieldError => {
  const e = make('FieldValueTooLong', field, maxLength >= 0 ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}` : 'value is too long');
  if (value !== undefined) e.value = value;
  return e;
};
/** field.TooMany */
export const tooMany = (field: string, actual: number, max: number): FieldError =>
  make('FieldValueTooMany', field, `must have at most ${max} items`, actual, true);

/** Path helpers: child('spec','replicas') → 'spec.replicas'; index('spec.containers', 0) → 'spec.containers[0]'. */
export const child = (base: string, ...names: string[]): string => [base, ...names].filter((s) => s !== '').join('.');
export const index = (base: string, i: number): string => `${base}[${i}]`;
export const key = (base: string, k: string): string => `${base}[${k}]`;

/**
 * Joins errors as upstream's utilerrors.Aggregate prints them: one → its message, several →
 * `[a, b]` (duplicates removed).
 */
export function aggregateMessage(errs: readonly FieldError[]): string {
  const msgs = [...new Set(errs.map((e) => e.message))];
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}
