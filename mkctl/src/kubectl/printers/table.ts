/**
 * Prints server-side Tables (meta.k8s.io/v1) as kubectl's HumanReadablePrinter does: priority-0
 * columns (all with -o wide), upper-cased headers, NAMESPACE first with -A, `kind/name` when
 * several kinds print together, LABELS with --show-labels; aligned by the tabwriter.
 */
import { tabwrite, TABLE_TABWRITER } from './tabwriter.js';

export interface TableColumn { name: string; type?: string; format?: string; priority?: number }
export interface TableRow { cells: unknown[]; object?: { metadata?: { name?: string; namespace?: string; labels?: Record<string, string> } } }
export interface Table { kind?: string; columnDefinitions?: TableColumn[]; rows?: TableRow[] }

export interface TableOptions {
  wide?: boolean;
  withNamespace?: boolean;
  showLabels?: boolean;
  /** `pod`, `deployment.apps`: prefixes the name cell (several kinds at once). */
  kindPrefix?: string;
  noHeaders?: boolean;
  /** Extra label columns (-L). */
  labelColumns?: string[];
}

/** kubectl's labels.FormatLabels: sorted k=v joined by commas, or <none>. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  const keys = Object.keys(labels ?? {}).sort();
  return keys.length ? keys.map((k) => `${k}=${labels![k]}`).join(',') : '<none>';
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const br = s.search(/[\f\n\r]/);
  if (br >= 0) s = `${s.slice(0, br)}...`;
  return s.replace(/\t/g, '^I');
}

/** The tab-separated lines (header + rows) of a Table, before alignment. */
export function tableLines(t: Table, o: TableOptions = {}): string[] {
  const cols = t.columnDefinitions ?? [];
  const shown = cols.map((c, i) => ({ c, i })).filter(({ c }) => o.wide || !c.priority);
  const nameIdx = cols.findIndex((c) => c.format === 'name');
  const lines: string[] = [];
  if (!o.noHeaders) {
    const h = shown.map(({ c }) => c.name.toUpperCase());
    if (o.withNamespace) h.unshift('NAMESPACE');
    for (const l of o.labelColumns ?? []) h.push(l.split('/').at(-1)!.toUpperCase());
    if (o.showLabels) h.push('LABELS');
    lines.push(h.join('\t'));
  }
  for (const row of t.rows ?? []) {
    const cells = shown.map(({ i }) => {
      const text = cellText(row.cells[i]);
      return i === nameIdx && o.kindPrefix ? `${o.kindPrefix}/${text}` : text;
    });
    if (o.withNamespace) cells.unshift(row.object?.metadata?.namespace ?? '');
    for (const l of o.labelColumns ?? []) cells.push(row.object?.metadata?.labels?.[l] ?? '');
    if (o.showLabels) cells.push(formatLabels(row.object?.metadata?.labels));
    lines.push(cells.join('\t'));
  }
  return lines;
}

/** A Table printed like `kubectl get`. */
export function printTable(t: Table, o: TableOptions = {}): string {
  const lines = tableLines(t, o);
  return lines.length ? tabwrite(`${lines.join('\n')}\n`, TABLE_TABWRITER) : '';
}

/**
 * For `-w`: Go's tabwriter with RememberWidths keeps the widths of earlier flushes, so later
 * rows line up with the header. Holds the widths seen so far.
 */
export class WatchTableWriter {
  private widths: number[] = [];
  format(lines: string[]): string {
    const rows = lines.map((l) => l.split('\t'));
    for (const r of rows) r.forEach((c, j) => { if (j < r.length - 1) this.widths[j] = Math.max(this.widths[j] ?? TABLE_TABWRITER.minwidth, [...c].length + TABLE_TABWRITER.padding); });
    return rows.map((r) => r.map((c, j) => (j < r.length - 1 ? c.padEnd(this.widths[j]!) : c)).join('')).join('\n') + '\n';
  }
}
