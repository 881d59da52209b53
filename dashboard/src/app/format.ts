/** Small formatting helpers shared by the pages. */
import type { ObjectMeta, TableColumn, TableRow } from './api';

// The AGE text as kubectl prints it, from the same code the apiserver's printers use (api/src/duration.ts).
export { humanDuration, translateTimestampSince as age } from '@mk8s/api/duration';

/** The index of a Table column by name (case-insensitive), -1 when absent. */
export function columnIndex(cols: readonly TableColumn[], name: string): number {
  return cols.findIndex((c) => c.name.toLowerCase() === name.toLowerCase());
}

/** A cell as text. */
export function cellText(row: TableRow, i: number): string {
  const v = i >= 0 ? row.cells[i] : undefined;
  return v === undefined || v === null ? '' : String(v);
}

export const metaOf = (row: TableRow): ObjectMeta => row.object?.metadata ?? { name: String(row.cells[0] ?? '') };

export const byNamespaceName = (a: { metadata: ObjectMeta }, b: { metadata: ObjectMeta }): number =>
  (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || a.metadata.name.localeCompare(b.metadata.name);
export const rowsByNamespaceName = (a: TableRow, b: TableRow): number => byNamespaceName({ metadata: metaOf(a) }, { metadata: metaOf(b) });
