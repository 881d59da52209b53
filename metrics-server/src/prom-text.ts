/**
 * A small parser of the Prometheus text exposition format (version 0.0.4), enough for the kubelet's
 * `/metrics/resource`: `# HELP` / `# TYPE` comments skipped, `name{l="v",...} value [timestampMs]`
 * samples, label values with `\\`, `\"` and `\n` escapes, values as Go's ParseFloat reads them
 * (`+Inf`, `-Inf`, `NaN`, exponents). Upstream metrics-server reads the same text with Prometheus'
 * `textparse`; no maintained npm package does only this (parse-prometheus-text-format is
 * unmaintained since 2018 and builds whole families), and this one is measured by bench/metrics-server.
 *
 * `onSample` is called once per sample, in order, with labels as a fresh object; a line that is
 * not a valid sample throws a PromParseError naming the line (upstream fails the whole scrape).
 */

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** Milliseconds since the epoch, when the line carries one. */
  timestampMs?: number;
}

export class PromParseError extends Error {
  constructor(readonly line: number, message: string) { super(`line ${line}: ${message}`); this.name = 'PromParseError'; }
}

/** [a-zA-Z_:] */
const isNameStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58;
/** [a-zA-Z0-9_:] */
const isNameChar = (c: number) => isNameStart(c) || (c >= 48 && c <= 57);
const SP = 32, TAB = 9, CR = 13, HASH = 35, LBRACE = 123, RBRACE = 125, COMMA = 44, EQ = 61, QUOTE = 34, BSLASH = 92;
const isWs = (c: number) => c === SP || c === TAB;
const isStop = (c: number) => c === SP || c === TAB || c === CR;

function parseValue(s: string, line: number): number {
  switch (s) {
    case '+Inf': case 'Inf': return Infinity;
    case '-Inf': return -Infinity;
    case 'NaN': return NaN;
  }
  const v = Number(s);
  if (s === '' || Number.isNaN(v)) throw new PromParseError(line, `invalid value "${s}"`);
  return v;
}

/** Parses text, calling onSample for each sample. @throws PromParseError */
export function parsePromText(text: string, onSample: (s: PromSample) => void): void {
  let lineNo = 0;
  let pos = 0;
  const n = text.length;
  while (pos < n) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = n;
    lineNo++;
    const start = pos;
    pos = end + 1;
    let i = start;
    while (i < end && (text.charCodeAt(i) === SP || text.charCodeAt(i) === TAB)) i++;
    if (i >= end || text.charCodeAt(i) === HASH || text.charCodeAt(i) === CR) continue;
    // metric name
    const nameStart = i;
    if (!isNameStart(text.charCodeAt(i))) throw new PromParseError(lineNo, `invalid metric name at "${text.slice(start, end)}"`);
    i++;
    while (i < end && isNameChar(text.charCodeAt(i))) i++;
    const name = text.slice(nameStart, i);
    const labels: Record<string, string> = {};
    if (text.charCodeAt(i) === LBRACE) {
      i++;
      for (;;) {
        while (i < end && (text.charCodeAt(i) === SP || text.charCodeAt(i) === COMMA)) i++;
        if (text.charCodeAt(i) === RBRACE) { i++; break; }
        const ls = i;
        while (i < end && isNameChar(text.charCodeAt(i))) i++;
        const label = text.slice(ls, i);
        if (!label || text.charCodeAt(i) !== EQ || text.charCodeAt(i + 1) !== QUOTE) throw new PromParseError(lineNo, `invalid label in "${text.slice(start, end)}"`);
        i += 2;
        let value = '';
        let chunk = i;
        for (;;) {
          if (i >= end) throw new PromParseError(lineNo, `unterminated label value in "${text.slice(start, end)}"`);
          const c = text.charCodeAt(i);
          if (c === QUOTE) { value += text.slice(chunk, i); i++; break; }
          if (c === BSLASH) {
            value += text.slice(chunk, i);
            const e = text[i + 1];
            value += e === 'n' ? '\n' : e === '\\' ? '\\' : e === '"' ? '"' : `\\${e ?? ''}`;
            i += 2; chunk = i; continue;
          }
          i++;
        }
        labels[label] = value;
      }
    }
    // value [timestamp]
    while (i < end && isWs(text.charCodeAt(i))) i++;
    let j = i;
    while (j < end && !isStop(text.charCodeAt(j))) j++;
    const value = parseValue(text.slice(i, j), lineNo);
    while (j < end && isWs(text.charCodeAt(j))) j++;
    let k = j;
    while (k < end && !isStop(text.charCodeAt(k))) k++;
    const sample: PromSample = { name, labels, value };
    if (k > j) {
      const ts = Number(text.slice(j, k));
      if (!Number.isInteger(ts)) throw new PromParseError(lineNo, `invalid timestamp "${text.slice(j, k)}"`);
      sample.timestampMs = ts;
    }
    onSample(sample);
  }
}
