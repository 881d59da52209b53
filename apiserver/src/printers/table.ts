/**
 * Server-side Table printing (meta.k8s.io/v1 Table), as the apiserver's TableConvertor does it
 * with upstream's pkg/printers/internalversion: kubectl prints the cells verbatim, so READY,
 * STATUS and AGE are computed here.
 */
import type { KubeObject, ResourceDescriptor } from '@mk8s/api';
import { apiVersionOf } from '@mk8s/api';
import { printerFor } from './printers.js';

export interface TableColumnDefinition {
  name: string;
  /** OpenAPI type of the cells: string, integer, number, boolean, date. */
  type: string;
  /** 'name' marks the column holding the object name; '' otherwise. */
  format: string;
  description: string;
  /** 0 = always shown; > 0 = only with `-o wide`. */
  priority: number;
}

export interface TableRowCondition { type: 'Completed'; status: 'True' | 'False' | 'Unknown'; reason?: string; message?: string }

export interface TableRow {
  cells: unknown[];
  conditions?: TableRowCondition[];
  /** PartialObjectMetadata (default), the full object (includeObject=Object), or absent (None). */
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string; continue?: string };
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export type IncludeObjectPolicy = 'None' | 'Object' | 'Metadata';

export interface ToTableOptions {
  /** ?includeObject=; default Metadata (PartialObjectMetadata, which `-A` and `--show-labels` need). */
  includeObject?: IncludeObjectPolicy;
  /** Omit columnDefinitions (watch events after the first, like upstream). */
  noHeaders?: boolean;
  listMeta?: { resourceVersion?: string; continue?: string };
  /** Epoch ms that AGE columns are computed against; default Date.now(). */
  now?: number;
}

/**
 * Whether the Accept header asks for a Table (`application/json;as=Table;v=v1;g=meta.k8s.io`,
 * or v1beta1). `-o yaml/json/name` send plain application/json and must get the object or list.
 */
export function wantsTable(accept: string | undefined): boolean {
  if (!accept) return false;
  for (const clause of accept.split(',')) {
    const [type, ...params] = clause.split(';').map((s) => s.trim());
    // A protobuf Table request is answered with a JSON Table (this server speaks JSON only).
    if (type !== 'application/json' && type !== 'application/vnd.kubernetes.protobuf') continue;
    const p = new Map(params.map((kv) => { const i = kv.indexOf('='); return [kv.slice(0, i).trim(), kv.slice(i + 1).trim()] as const; }));
    if (p.get('as') === 'Table' && p.get('g') === 'meta.k8s.io' && (p.get('v') === 'v1' || p.get('v') === 'v1beta1')) return true;
  }
  return false;
}

/** The column set a resource prints with (wide columns have priority 1). */
export function tableColumns(resource: ResourceDescriptor): TableColumnDefinition[] {
  return printerFor(resource).columns.map((c) => ({ ...c }));
}

/**
 * Converts objects of one resource into a Table. Safe on any object shape: missing fields
 * print as upstream prints their zero values.
 */
export function toTable(resource: ResourceDescriptor, objects: readonly KubeObject[], opts: ToTableOptions = {}): Table {
  const printer = printerFor(resource);
  const now = opts.now ?? Date.now();
  const include = opts.includeObject ?? 'Metadata';
  const metadata: Table['metadata'] = {};
  if (opts.listMeta?.resourceVersion !== undefined) metadata.resourceVersion = opts.listMeta.resourceVersion;
  if (opts.listMeta?.continue) metadata.continue = opts.listMeta.continue;
  const rows = objects.map((obj): TableRow => {
    const { cells, conditions } = printer.row(obj, now);
    const row: TableRow = { cells };
    if (conditions) row.conditions = conditions;
    if (include === 'Metadata') row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
    else if (include === 'Object') row.object = { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(resource), kind: obj.kind ?? resource.kind };
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: opts.noHeaders ? [] : printer.columns.map((c) => ({ ...c })),
    rows,
  };
}
