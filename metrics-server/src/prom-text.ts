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

const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;

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
    while (i < end && (text[i] === ' ' || text[i] === '\t')) i++;
    if (i >= end || text[i] === '#' || text[i] === '\r') continue;
    // metric name
    const nameStart = i;
    if (!NAME_START.test(text[i]!)) throw new PromParseError(lineNo, `invalid metric name at "${text.slice(start, end)}"`);
    i++;
    while (i < end && NAME_CHAR.test(text[i]!)) i++;
    const name = text.slice(nameStart, i);
    const labels: Record<string, string> = {};
    if (text[i] === '{') {
      i++;
      for (;;) {
        while (i < end && (text[i] === ' ' || text[i] === ',')) i++;
        if (text[i] === '}') { i++; break; }
        const ls = i;
        while (i < end && NAME_CHAR.test(text[i]!)) i++;
        const label = text.slice(ls, i);
        if (!label || text[i] !== '=' || text[i + 1] !== '"') throw new PromParseError(lineNo, `invalid label in "${text.slice(start, end)}"`);
        i += 2;
        let value = '';
        let chunk = i;
        for (;;) {
          if (i >= end) throw new PromParseError(lineNo, `unterminated label value in "${text.slice(start, end)}"`);
          const c = text[i];
          if (c === '"') { value += text.slice(chunk, i); i++; break; }
          if (c === '\\') {
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
    while (i < end && (text[i] === ' ' || text[i] === '\t')) i++;
    let j = i;
    while (j < end && text[j] !== ' ' && text[j] !== '\t' && text[j] !== '\r') j++;
    const value = parseValue(text.slice(i, j), lineNo);
    while (j < end && (text[j] === ' ' || text[j] === '\t')) j++;
    let k = j;
    while (k < end && text[k] !== ' ' && text[k] !== '\t' && text[k] !== '\r') k++;
    const sample: PromSample = { name, labels, value };
    if (k > j) {
      const ts = Number(text.slice(j, k));
      if (!Number.isInteger(ts)) throw new PromParseError(lineNo, `invalid timestamp "${text.slice(j, k)}"`);
      sample.timestampMs = ts;
    }
    onSample(sample);
  }
}
