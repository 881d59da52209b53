/** Shared building blocks of the printers: column definitions and cell formatting helpers. */
import type { Container, KubeObject, LabelSelector } from '@mk8s/api';
import { selectorToString } from '@mk8s/api';
import type { TableColumnDefinition, TableRowCondition } from './table.js';
import { translateTimestampSince } from '@mk8s/api';

export interface Printer {
  columns: readonly TableColumnDefinition[];
  row(obj: KubeObject, now: number): { cells: unknown[]; conditions?: TableRowCondition[] };
}

export const col = (name: string, type: string, description: string, extra: { format?: string; priority?: number } = {}): TableColumnDefinition =>
  ({ name, type, format: extra.format ?? '', description, priority: extra.priority ?? 0 });

export const NAME = col('Name', 'string',
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  { format: 'name' });
export const AGE = col('Age', 'string',
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata');
export const wide = (c: TableColumnDefinition): TableColumnDefinition => ({ ...c, priority: 1 });

export const age = (o: KubeObject, now: number) => translateTimestampSince(o.metadata.creationTimestamp, now);
export const as = <T>(o: KubeObject): T => o as unknown as T;

export function define<T>(columns: TableColumnDefinition[], row: (obj: T, meta: KubeObject, now: number) => unknown[] | { cells: unknown[]; conditions?: TableRowCondition[] }): Printer {
  return {
    columns,
    row(obj, now) {
      const r = row(as<T>(obj), obj, now);
      return Array.isArray(r) ? { cells: r } : r;
    },
  };
}

export function containerCells(containers: readonly Container[] | undefined): [string, string] {
  const cs = containers ?? [];
  return [cs.map((c) => c.name).join(','), cs.map((c) => c.image ?? '').join(',')];
}

export function selectorText(sel: LabelSelector | undefined): string {
  try { return selectorToString(sel); } catch { return '<invalid>'; }
}

export const CONTAINERS = wide(col('Containers', 'string', 'Names of each container in the template.'));
export const IMAGES = wide(col('Images', 'string', 'Images referenced by each container in the template.'));

/** labels.FormatLabels: sorted `k=v` pairs, `<none>` when empty. */
export function formatLabels(m: Readonly<Record<string, string>> | undefined): string {
  const keys = Object.keys(m ?? {}).sort();
  return keys.length ? keys.map((k) => `${k}=${m![k]}`).join(',') : '<none>';
}

