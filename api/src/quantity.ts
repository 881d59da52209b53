/**
 * Kubernetes resource quantities (apimachinery pkg/api/resource): parsing `100m`, `1.5`,
 * `128Mi`, `1G`, `1e3`, exact arithmetic on BigInts, and upstream's canonical string form.
 */
import { ApiError } from './errors.js';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** An exact quantity: num / den (den > 0), plus the format it was written in. */
export interface Quantity { readonly num: bigint; readonly den: bigint; readonly format: QuantityFormat }

export const QUANTITY_REGEXP = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
export const ERR_FORMAT_WRONG = `quantities must match the regular expression '${QUANTITY_REGEXP}'`;
export const ERR_NUMERIC = 'unable to parse numeric part of quantity';
export const ERR_SUFFIX = "unable to parse quantity's suffix";

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DEC_BY_EXP: Record<number, string> = Object.fromEntries(Object.entries(DECIMAL_SUFFIX).map(([k, v]) => [v, k]));
const BIN_BY_INDEX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

const pow10 = (n: number): bigint => 10n ** BigInt(n);
const bad = (msg: string) => new ApiError('BadRequest', msg);

/**
 * Parses a quantity exactly. Numbers (as JSON may carry them) are accepted too.
 * @throws ApiError BadRequest with upstream's message (ErrFormatWrong / ErrNumeric / ErrSuffix).
 */
export function parseQuantityExact(input: string | number): Quantity {
  const s = typeof input === 'number' ? numberToString(input) : input;
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(s);
  if (!m || s.length === 0) throw bad(ERR_FORMAT_WRONG);
  const [, sign, whole = '', frac = '', suffix = ''] = m;
  if (whole.length + frac.length === 0) throw bad(ERR_FORMAT_WRONG);
  if (!/^[eEinumkKMGTP]*[-+]?[0-9]*$/.test(suffix)) throw bad(ERR_FORMAT_WRONG);
  let num = BigInt(whole + frac || '0');
  let den = pow10(frac.length);
  let format: QuantityFormat = 'DecimalSI';
  if (suffix in BINARY_SUFFIX) {
    num *= 2n ** BigInt(BINARY_SUFFIX[suffix]!);
    format = 'BinarySI';
  } else if (suffix in DECIMAL_SUFFIX) {
    const e = DECIMAL_SUFFIX[suffix]!;
    if (e >= 0) num *= pow10(e); else den *= pow10(-e);
  } else if (/^[eE][-+]?[0-9]+$/.test(suffix)) {
    const e = Number(suffix.slice(1));
    if (!Number.isSafeInteger(e) || Math.abs(e) > 1000) throw bad(ERR_NUMERIC);
    if (e >= 0) num *= pow10(e); else den *= pow10(-e);
    format = 'DecimalExponent';
  } else {
    throw bad(ERR_SUFFIX);
  }
  if (sign === '-') num = -num;
  return reduce({ num, den, format });
}

function numberToString(n: number): string {
  if (!Number.isFinite(n)) throw bad(ERR_FORMAT_WRONG);
  // Exponent notation from JS (1e21, 1e-7) is also valid quantity syntax.
  return String(n).replace('e+', 'e');
}

function gcd(a: bigint, b: bigint): bigint { a = a < 0n ? -a : a; while (b) [a, b] = [b, a % b]; return a; }
function reduce(q: Quantity): Quantity {
  const g = gcd(q.num, q.den) || 1n;
  return { num: q.num / g, den: q.den / g, format: q.format };
}

/** ceil(num/den) for any sign (upstream rounds away from zero when losing precision: "rounded up"). */
function roundUp(num: bigint, den: bigint): bigint {
  const q = num / den;
  if (q * den === num) return q;
  return num > 0n ? q + 1n : q - 1n;
}

/** Whether s is a valid quantity. */
export function isValidQuantity(s: string | number): boolean {
  try { parseQuantityExact(s); return true; } catch { return false; }
}

/** The quantity as a float (e.g. '100m' → 0.1, '128Mi' → 134217728). @throws ApiError BadRequest */
export function parseQuantity(s: string | number): number {
  const q = parseQuantityExact(s);
  return Number(q.num) / Number(q.den);
}

/** Milli-units rounded up, as Quantity.MilliValue (CPU: '100m' → 100, '1.5' → 1500). @throws ApiError BadRequest */
export function parseCpuMillis(s: string | number): number {
  const q = parseQuantityExact(s);
  return Number(roundUp(q.num * 1000n, q.den));
}

/** Whole units rounded up, as Quantity.Value (memory: '128Mi' → 134217728, '1G' → 1e9). @throws ApiError BadRequest */
export function parseBytes(s: string | number): number {
  const q = parseQuantityExact(s);
  return Number(roundUp(q.num, q.den));
}

/** Compares two quantities: -1, 0, 1. */
export function compareQuantities(a: string | number, b: string | number): number {
  const x = parseQuantityExact(a), y = parseQuantityExact(b);
  const l = x.num * y.den, r = y.num * x.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/**
 * Upstream's canonical string (Quantity.String): decimal values as an integer mantissa with an
 * SI suffix whose exponent is a multiple of 3, rounded up to nano; binary values with the
 * largest Ki..Ei suffix that keeps the mantissa whole (under 1024 or fractional → decimal).
 */
export function formatQuantity(q: Quantity): string {
  let format = q.format;
  if (format === 'BinarySI') {
    const whole = q.num % q.den === 0n;
    const v = whole ? q.num / q.den : 0n;
    if (!whole || (v > -1024n && v < 1024n)) format = 'DecimalSI';
    else {
      let mant = v; let i = 0;
      while (i < 6 && mant % 1024n === 0n) { mant /= 1024n; i++; }
      return `${mant}${BIN_BY_INDEX[i]}`;
    }
  }
  let mant = roundUp(q.num * pow10(9), q.den);
  let exp = -9;
  if (mant === 0n) return '0';
  const maxExp = format === 'DecimalSI' ? 18 : Number.MAX_SAFE_INTEGER;
  while (mant % 1000n === 0n && exp + 3 <= maxExp) { mant /= 1000n; exp += 3; }
  if (format === 'DecimalExponent') return exp === 0 ? `${mant}` : `${mant}e${exp}`;
  return `${mant}${DEC_BY_EXP[exp]}`;
}

/** Parses and re-prints in canonical form ('0.5' → '500m', '1000m' → '1', '2048Ki' → '2Mi'). @throws ApiError BadRequest */
export function canonicalQuantity(s: string | number): string {
  const q = parseQuantityExact(s);
  if (typeof s === 'string' && keepsInputString(s)) return s;
  return formatQuantity(q);
}

/**
 * Upstream's ParseQuantity fast path keeps the input string when it already looks canonical
 * ('1E3', '+1', '01', '1025Ki' print as written). Mirrors that check; s is known to be valid.
 */
function keepsInputString(s: string): boolean {
  const m = /^[+-]?([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(s);
  if (!m) return false;
  const num = (m[1] ?? '').replace(/^0+/, ''), denom = m[2] ?? '', suffix = m[3] ?? '';
  const shifted = num + denom;
  if (shifted === '' || shifted.startsWith('0')) return false;
  if (suffix in BINARY_SUFFIX) {
    if (denom !== '' || 15 - num.length - Math.trunc((BINARY_SUFFIX[suffix]! * 3) / 10) - 1 < 0) return false;
    return (Number(num) & 7) !== 0;
  }
  const exponent = suffix in DECIMAL_SUFFIX ? DECIMAL_SUFFIX[suffix]! : Number(suffix.slice(1));
  if (18 - (num.length + denom.length) < 0) return false;
  const scale = exponent - denom.length;
  return scale >= -9 && scale % 3 === 0 && !shifted.endsWith('000');
}

/** Formats milli-units of CPU canonically (1500 → '1500m', 2000 → '2'). */
export function formatCpuMillis(millis: number): string {
  return formatQuantity(reduce({ num: BigInt(Math.round(millis)), den: 1000n, format: 'DecimalSI' }));
}

/** Formats bytes canonically: binary suffixes when exact (134217728 → '128Mi'), decimal otherwise. */
export function formatBytes(bytes: number, format: QuantityFormat = 'BinarySI'): string {
  return formatQuantity({ num: BigInt(Math.round(bytes)), den: 1n, format });
}
