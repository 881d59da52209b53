/** Small request helpers over RestClientset that commands share. */
import { collectionPath, isNotFound, type KubeList, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type { RestClientset } from '@mk8s/client';
import type { Table } from './printers/table.js';

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

export function objectPath(r: ResourceDescriptor, namespace: string | undefined, name?: string): string {
  const base = collectionPath(r, r.namespaced ? namespace : undefined);
  return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
}

export interface Selection { labelSelector?: string; fieldSelector?: string }

function q(sel: Selection): Record<string, string> {
  const out: Record<string, string> = {};
  if (sel.labelSelector) out['labelSelector'] = sel.labelSelector;
  if (sel.fieldSelector) out['fieldSelector'] = sel.fieldSelector;
  return out;
}

export function getTable(c: RestClientset, r: ResourceDescriptor, ns: string | undefined, name: string | undefined, sel: Selection = {}): Promise<Table> {
  return c.requestJson<Table>({ path: objectPath(r, ns, name), query: { ...q(sel), includeObject: 'Object' }, headers: { accept: TABLE_ACCEPT } });
}

export async function listObjects<T extends KubeObject = KubeObject>(c: RestClientset, r: ResourceDescriptor, ns: string | undefined, sel: Selection = {}): Promise<T[]> {
  const list = await c.requestJson<KubeList<T>>({ path: objectPath(r, ns), query: q(sel) });
  const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
  // Items of a list carry no kind on the wire; printers and -o yaml need it.
  return (list.items ?? []).map((o) => ({ ...o, apiVersion, kind: r.kind }) as T);
}

export async function getObject<T extends KubeObject = KubeObject>(c: RestClientset, r: ResourceDescriptor, ns: string | undefined, name: string): Promise<T> {
  return c.requestJson<T>({ path: objectPath(r, ns, name) });
}

export async function getOptional<T extends KubeObject = KubeObject>(c: RestClientset, r: ResourceDescriptor, ns: string | undefined, name: string): Promise<T | undefined> {
  try { return await getObject<T>(c, r, ns, name); } catch (e) { if (isNotFound(e)) return undefined; throw e; }
}
