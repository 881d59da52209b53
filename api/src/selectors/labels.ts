/**
 * Label selectors: the string grammar of `?labelSelector=` and metav1.LabelSelector objects,
 * compiled to one matcher. Mirrors apimachinery pkg/labels (Parse, Requirement,
 * LabelSelectorAsSelector); parse errors carry upstream's messages.
 */
import { ApiError } from '../errors.js';
import type { LabelSelector as MetaLabelSelector } from '../types.js';
import { aggregateMessage, child, index, invalid, key as keyPath, notSupported, type FieldError } from '../validation/field.js';
import { isQualifiedName, isValidLabelValue } from '../validation/names.js';

/** selection.Operator, spelled as upstream. */
export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** One AND-ed term of a selector. Values keep the order given (sorted for string output). */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

/** A compiled label selector. Immutable; safe to share. */
export interface ParsedLabelSelector {
  /** Requirements sorted by key. */
  readonly requirements: readonly LabelRequirement[];
  /** True when the selector does not restrict anything (matches everything). */
  readonly empty: boolean;
  /** True for the nothing-selector (a nil metav1.LabelSelector): matches no object. */
  readonly nothing: boolean;
  /** Whether labels (absent = no labels) satisfy every requirement. */
  matches(labels?: Readonly<Record<string, string>> | null): boolean;
  /** Canonical string: `a=b,c in (x,y),!d`, as upstream's Selector.String(). */
  toString(): string;
  /** The value the selector demands for key (=, == or single-valued in), if any. */
  requiresExactMatch(key: string): string | undefined;
}

const BINARY_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
const ALL_OPERATORS = [...BINARY_OPERATORS, 'exists', '!'];

function requirementMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in': case '=': case '==': return has && r.values.includes(v!);
    case 'notin': case '!=': return !has || !r.values.includes(v!);
    case 'exists': return has;
    case '!': return !has;
    case 'gt': case 'lt': {
      if (!has || !/^[+-]?\d+$/.test(v!) || r.values.length !== 1) return false;
      const a = BigInt(v!), b = BigInt(r.values[0]!);
      return r.operator === 'gt' ? a > b : a < b;
    }
  }
}

function requirementString(r: LabelRequirement): string {
  const sorted = [...r.values].sort();
  const vals = sorted.join(',');
  switch (r.operator) {
    case 'exists': return r.key;
    case '!': return `!${r.key}`;
    case 'in': return `${r.key} in (${vals})`;
    case 'notin': return `${r.key} notin (${vals})`;
    case 'gt': return `${r.key}>${vals}`;
    case 'lt': return `${r.key}<${vals}`;
    default: return `${r.key}${r.operator}${vals}`;
  }
}

class Selector implements ParsedLabelSelector {
  readonly requirements: readonly LabelRequirement[];
  constructor(reqs: LabelRequirement[], readonly nothing = false) {
    // Stable sort by key, for a deterministic string form (upstream sorts ByKey).
    this.requirements = [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
  get empty(): boolean { return !this.nothing && this.requirements.length === 0; }
  matches(labels?: Readonly<Record<string, string>> | null): boolean {
    if (this.nothing) return false;
    const l = labels ?? {};
    return this.requirements.every((r) => requirementMatches(r, l));
  }
  toString(): string { return this.nothing ? '' : this.requirements.map(requirementString).join(','); }
  requiresExactMatch(key: string): string | undefined {
    const r = this.requirements.find((x) => x.key === key);
    if (!r || !['=', '==', 'in'].includes(r.operator) || r.values.length !== 1) return undefined;
    return r.values[0];
  }
}

/** A selector that matches everything. */
export const everything = (): ParsedLabelSelector => new Selector([]);
/** A selector that matches nothing (what a nil metav1.LabelSelector means). */
export const nothing = (): ParsedLabelSelector => new Selector([], true);

/**
 * labels.NewRequirement: validates key, operator, value count and values. `path` prefixes the
 * field paths in messages (upstream passes none when parsing a query string).
 */
export function newRequirement(key: string, operator: string, values: readonly string[], path = ''): { req: LabelRequirement; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const keyMsgs = isQualifiedName(key);
  if (keyMsgs.length) errors.push(invalid(child(path, 'key'), key, keyMsgs.join('; ')));
  const valuesPath = child(path, 'values');
  switch (operator) {
    case 'in': case 'notin':
      if (values.length === 0) errors.push(invalid(valuesPath, [...values], "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=': case '==': case '!=':
      if (values.length !== 1) errors.push(invalid(valuesPath, [...values], 'exact-match compatibility requires one single value'));
      break;
    case 'exists': case '!':
      if (values.length !== 0) errors.push(invalid(valuesPath, [...values], 'values set must be empty for exists and does not exist'));
      break;
    case 'gt': case 'lt':
      if (values.length !== 1) errors.push(invalid(valuesPath, [...values], "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => { if (!/^[+-]?\d+$/.test(v)) errors.push(invalid(index(valuesPath, i), v, "for 'Gt', 'Lt' operators, the value must be an integer")); });
      break;
    default:
      errors.push(notSupported(child(path, 'operator'), operator, ALL_OPERATORS));
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length) errors.push(invalid(keyPath(index(valuesPath, i), key), v, msgs.join('; ')));
  });
  return { req: { key, operator: operator as LabelOperator, values: [...values] }, errors };
}

// ---- the string grammar (labels.Parse) ----

type Tok = 'error' | 'eos' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(';
interface Item { tok: Tok; lit: string }
const SYMBOLS: Record<string, Tok> = { ')': ')', ',': ',', '!': '!', '==': '==', '=': '=', '>': '>', in: 'in', '<': '<', '!=': '!=', notin: 'notin', '(': '(' };
const isWs = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string) => '=!(),><'.includes(c);

function lex(s: string): Item[] {
  const out: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWs(s[pos]!)) pos++;
    if (pos >= s.length) { out.push({ tok: 'eos', lit: '' }); return out; }
    if (isSpecial(s[pos]!)) {
      // Longest operator made only of special symbols, as upstream's scanSpecialSymbol.
      let buf = ''; let last: Item | undefined;
      while (pos < s.length && isSpecial(s[pos]!)) {
        buf += s[pos];
        const t = SYMBOLS[buf];
        if (t) { last = { tok: t, lit: buf }; pos++; } else if (last) break; else pos++;
      }
      out.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buf}'` });
    } else {
      let buf = '';
      while (pos < s.length && !isSpecial(s[pos]!) && !isWs(s[pos]!)) buf += s[pos++];
      const t = SYMBOLS[buf];
      out.push({ tok: t ?? 'id', lit: buf });
    }
  }
}

class SelectorParser {
  private pos = 0;
  constructor(private readonly items: Item[]) {}
  /** In value context, the keywords in/notin are plain identifiers. */
  private look(values: boolean): Item {
    const it = this.items[this.pos]!;
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id', lit: it.lit } : it;
  }
  private next(values: boolean): Item { const it = this.look(values); this.pos++; return it; }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.look(true);
      if (tok === 'id' || tok === '!') {
        try { reqs.push(this.requirement()); } catch (e) { throw new Error(`unable to parse requirement: ${(e as Error).message}`); }
        const t = this.next(true);
        if (t.tok === 'eos') return reqs;
        if (t.tok === ',') {
          const t2 = this.look(true);
          if (t2.tok !== 'id' && t2.tok !== '!') throw new Error(`found '${t2.lit}', expected: identifier after ','`);
          continue;
        }
        throw new Error(`found '${t.lit}', expected: ',' or 'end of string'`);
      }
      if (tok === 'eos') return reqs;
      throw new Error(`found '${lit}', expected: !, identifier, or 'end of string'`);
    }
  }

  private requirement(): LabelRequirement {
    let op: string | undefined;
    let t = this.next(true);
    if (t.tok === '!') { op = '!'; t = this.next(true); }
    if (t.tok !== 'id') throw new Error(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length) throw new Error(invalid('<nil>', key, keyErrs.join('; ')).message);
    const la = this.look(true).tok;
    if (la === 'eos' || la === ',') op ??= 'exists';
    if (op === 'exists' || op === '!') return this.build(key, op, []);
    const o = this.next(false);
    const opOf: Partial<Record<Tok, string>> = { in: 'in', '=': '=', '==': '==', '>': 'gt', '<': 'lt', notin: 'notin', '!=': '!=' };
    op = opOf[o.tok];
    if (!op) throw new Error(`found '${o.lit}', expected: ${BINARY_OPERATORS.join(', ')}`);
    const values = op === 'in' || op === 'notin' ? this.setValues() : this.exactValue();
    return this.build(key, op, [...new Set(values)].sort());
  }

  private build(key: string, op: string, values: string[]): LabelRequirement {
    const { req, errors } = newRequirement(key, op, values);
    if (errors.length) throw new Error(aggregateMessage(errors));
    return req;
  }

  private setValues(): string[] {
    const open = this.next(true);
    if (open.tok !== '(') throw new Error(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.look(true);
    if (tok === ')') { this.next(true); return ['']; }
    if (tok !== 'id' && tok !== ',') throw new Error(`found '${lit}', expected: ',', ')' or identifier`);
    const vals = this.identifiers();
    if (this.next(true).tok !== ')') throw new Error(`found '${lit}', expected: ')'`);
    return vals;
  }

  /** A comma-separated list in which empty entries mean the empty value. */
  private identifiers(): string[] {
    const s: string[] = [];
    for (;;) {
      const t = this.next(true);
      if (t.tok === 'id') {
        s.push(t.lit);
        const t2 = this.look(true);
        if (t2.tok === ',') continue;
        if (t2.tok === ')') return s;
        throw new Error(`found '${t2.lit}', expected: ',' or ')'`);
      } else if (t.tok === ',') {
        if (s.length === 0) s.push('');
        const t2 = this.look(true).tok;
        if (t2 === ')') { s.push(''); return s; }
        if (t2 === ',') s.push('');
      } else {
        throw new Error(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
  }

  private exactValue(): string[] {
    const la = this.look(true).tok;
    if (la === 'eos' || la === ',') return [''];
    const t = this.next(true);
    if (t.tok === 'id') return [t.lit];
    throw new Error(`found '${t.lit}', expected: identifier`);
  }
}

/**
 * Parses a `labelSelector` query value. '' matches everything.
 * @throws ApiError BadRequest with upstream's parse message.
 */
export function parseLabelSelector(s: string): ParsedLabelSelector {
  try {
    return new Selector(new SelectorParser(lex(s)).parse());
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ApiError('BadRequest', (e as Error).message);
  }
}

/** Selector matching exactly the given labels (labels.SelectorFromSet); empty/undefined → everything. */
export function labelSelectorFromSet(set?: Readonly<Record<string, string>> | null): ParsedLabelSelector {
  return new Selector(Object.entries(set ?? {}).map(([key, v]) => ({ key, operator: '=' as const, values: [v] })));
}

const EXPR_OPS: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * metav1.LabelSelectorAsSelector: undefined/null → nothing; {} → everything; matchLabels are
 * `=`, matchExpressions In/NotIn/Exists/DoesNotExist.
 * @throws ApiError BadRequest for an invalid key, value or operator.
 */
export function labelSelectorFromObject(sel: MetaLabelSelector | null | undefined): ParsedLabelSelector {
  if (sel === undefined || sel === null) return nothing();
  const reqs: LabelRequirement[] = [];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    const { req, errors } = newRequirement(k, '=', [v]);
    errs.push(...errors); reqs.push(req);
  }
  for (const e of sel.matchExpressions ?? []) {
    const op = EXPR_OPS[e.operator];
    if (!op) throw new ApiError('BadRequest', `${JSON.stringify(e.operator)} is not a valid label selector operator`);
    const { req, errors } = newRequirement(e.key, op, e.values ?? []);
    errs.push(...errors); reqs.push(req);
  }
  if (errs.length) throw new ApiError('BadRequest', aggregateMessage(errs));
  return new Selector(reqs);
}

/**
 * The string form of a metav1.LabelSelector, as `Scale.status.selector` carries it ('' for
 * everything). Throws like labelSelectorFromObject.
 */
export function selectorToString(sel: MetaLabelSelector | null | undefined): string {
  return labelSelectorFromObject(sel).toString();
}

/** metav1.FormatLabelSelector, for human output: `<none>` when empty, `<error>` when invalid. */
export function formatLabelSelector(sel: MetaLabelSelector | null | undefined): string {
  try {
    const s = labelSelectorFromObject(sel).toString();
    return s === '' ? '<none>' : s;
  } catch {
    return '<error>';
  }
}
