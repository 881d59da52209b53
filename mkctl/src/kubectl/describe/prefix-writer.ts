/**
 * kubectl describe's PrefixWriter: Write(level, text) indents by two spaces per level; the whole
 * description goes through one tabwriter (minwidth 0, padding 2) at the end.
 */
import { DESCRIBE_TABWRITER, tabwrite } from '../printers/tabwriter.js';
import { humanDuration } from '@mk8s/api';

export const LEVEL_0 = 0;
export const LEVEL_1 = 1;
export const LEVEL_2 = 2;
export const LEVEL_3 = 3;

export class PrefixWriter {
  private buf = '';
  write(level: number, text: string): void { this.buf += '  '.repeat(level) + text; }
  writeLine(...parts: string[]): void { this.buf += `${parts.join(' ')}\n`; }
  toString(): string { return tabwrite(this.buf, DESCRIBE_TABWRITER); }
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n: number) => String(n).padStart(2, '0');

/** Go's time.RFC1123Z in local time: "Mon, 02 Jan 2006 15:04:05 -0700". */
export function rfc1123z(ts: string | undefined | null): string {
  if (!ts) return '<unknown>';
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return '<unknown>';
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const a = Math.abs(off);
  return `${DAYS[d.getDay()]}, ${p2(d.getDate())} ${MONTHS[d.getMonth()]} ${d.getFullYear()} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${sign}${p2(Math.floor(a / 60))}${p2(a % 60)}`;
}

export function since(ts: string | undefined | null, now: number): string {
  if (!ts) return '<unknown>';
  const t = Date.parse(ts);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

/** printLabelsMultilineWithIndent. */
export function printLabelsMultiline(w: PrefixWriter, title: string, labels: Record<string, string> | undefined, initialIndent = ''): void {
  w.write(LEVEL_0, `${initialIndent}${title}:\t`);
  const keys = Object.keys(labels ?? {}).sort();
  if (!keys.length) { w.writeLine('<none>'); return; }
  keys.forEach((k, i) => {
    if (i) w.write(LEVEL_0, `${initialIndent}\t`);
    w.write(LEVEL_0, `${k}=${labels![k]}\n`);
  });
}

const MAX_ANNOTATION_LEN = 140;
const SKIP_ANNOTATIONS = new Set(['kubectl.kubernetes.io/last-applied-configuration']);

/** printAnnotationsMultiline (last-applied is skipped, long values wrap and shorten). */
export function printAnnotationsMultiline(w: PrefixWriter, title: string, annotations: Record<string, string> | undefined, initialIndent = ''): void {
  w.write(LEVEL_0, `${initialIndent}${title}:\t`);
  const keys = Object.keys(annotations ?? {}).filter((k) => !SKIP_ANNOTATIONS.has(k)).sort();
  if (!keys.length) { w.writeLine('<none>'); return; }
  const indent = `${initialIndent}\t`;
  keys.forEach((k, i) => {
    if (i) w.write(LEVEL_0, indent);
    const value = annotations![k]!.replace(/\n$/, '');
    if (value.length + k.length + 2 > MAX_ANNOTATION_LEN || value.includes('\n')) {
      w.write(LEVEL_0, `${k}:\n`);
      for (const s of value.split('\n')) w.write(LEVEL_0, `${indent}  ${s.length > MAX_ANNOTATION_LEN - 2 ? `${s.slice(0, MAX_ANNOTATION_LEN - 2)}...` : s}\n`);
    } else w.write(LEVEL_0, `${k}: ${value}\n`);
  });
}

export interface Toleration { key?: string; operator?: string; value?: string; effect?: string; tolerationSeconds?: number }

export function printTolerationsMultiline(w: PrefixWriter, title: string, tolerations: Toleration[] | undefined, initialIndent = ''): void {
  w.write(LEVEL_0, `${initialIndent}${title}:\t`);
  if (!tolerations?.length) { w.writeLine('<none>'); return; }
  tolerations.forEach((t, i) => {
    if (i) w.write(LEVEL_0, `${initialIndent}\t`);
    let s = t.key ?? '';
    if (t.value) s += `=${t.value}`;
    if (t.effect) s += `:${t.effect}`;
    if (t.operator === 'Exists' && !t.value) s += t.key || t.effect ? ' op=Exists' : 'op=Exists';
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null) s += ` for ${t.tolerationSeconds}s`;
    w.write(LEVEL_0, `${s}\n`);
  });
}

export interface EventLike {
  type?: string; reason?: string; message?: string; count?: number;
  firstTimestamp?: string | null; lastTimestamp?: string | null; eventTime?: string | null;
  source?: { component?: string }; reportingComponent?: string; reportingController?: string;
  metadata?: { creationTimestamp?: string };
}

const eventTime = (e: EventLike) => Date.parse(e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata?.creationTimestamp || '') || 0;

/** DescribeEvents: the Events table, oldest first. */
export function describeEvents(w: PrefixWriter, events: EventLike[], now: number): void {
  if (!events.length) { w.write(LEVEL_0, 'Events:\t<none>\n'); return; }
  const sorted = [...events].sort((a, b) => eventTime(a) - eventTime(b));
  w.write(LEVEL_0, 'Events:\n  Type\tReason\tAge\tFrom\tMessage\n');
  w.write(LEVEL_1, '----\t------\t----\t----\t-------\n');
  for (const e of sorted) {
    const first = e.firstTimestamp ? since(e.firstTimestamp, now) : since(e.eventTime, now);
    const interval = (e.count ?? 0) > 1 ? `${since(e.lastTimestamp || e.eventTime, now)} (x${e.count} over ${first})` : first;
    const source = e.source?.component || e.reportingController || e.reportingComponent || '';
    w.write(LEVEL_1, `${e.type ?? ''}\t${e.reason ?? ''}\t${interval}\t${source}\t${(e.message ?? '').trim()}\n`);
  }
}

/** metav1.FormatLabelSelector. */
export function formatLabelSelector(sel: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } | undefined): string {
  if (!sel) return '<none>';
  const parts: string[] = [];
  for (const k of Object.keys(sel.matchLabels ?? {}).sort()) parts.push(`${k}=${sel.matchLabels![k]}`);
  for (const e of sel.matchExpressions ?? []) {
    const op = e.operator.toLowerCase();
    if (op === 'exists') parts.push(e.key);
    else if (op === 'doesnotexist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${op} (${(e.values ?? []).join(',')})`);
  }
  return parts.length ? parts.join(',') : '<none>';
}
