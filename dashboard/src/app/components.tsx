/** Building blocks of the pages: the error panel and the live Table of any resource. */
import { Component, type ComponentChildren } from 'preact';
import type { ApiError, TableRow } from './api';
import { chainRoute, collectionPath, objectRoute, type ResourceRef } from './discovery';
import { age, cellText, columnIndex, metaOf, rowsByNamespaceName } from './format';
import { useLive, useNow, useSorted } from './hooks';

/** What a failed read shows: "Forbidden" for a 403, as the apiserver said it. */
export function Problem({ error, what }: { error: ApiError; what: string }) {
  const title = error.code === 403 ? 'Forbidden' : error.code === 401 ? 'Unauthorized' : `Error ${error.code || ''}`.trim();
  return (
    <div class="problem" data-code={error.code} role="alert">
      <strong>{title}</strong>: {what}
      <p class="message">{error.message}</p>
      {error.code === 401 && <p>The token expired or is not valid: run <code>mkctl dashboard --url</code> for a new login URL.</p>}
    </div>
  );
}

export function Section({ title, children, count }: { title: string; children: ComponentChildren; count?: number | undefined }) {
  return (
    <section>
      <h2>{title}{count !== undefined && <span class="count">{count}</span>}</h2>
      {children}
    </section>
  );
}

export interface ResourceTableProps {
  r: ResourceRef & { kind: string };
  namespace?: string | undefined;
  /** Column names to show, in order (default: the priority-0 columns). 'Age' ticks client-side. */
  columns?: readonly string[] | undefined;
  /** Extra cells after the printed ones. */
  extra?: { header: string; cell: (row: TableRow) => ComponentChildren } | undefined;
  /** Changes when what extra.cell reads changes (rows are memoized on their data). */
  extraVersion?: number | undefined;
  query?: Record<string, string> | undefined;
  testId?: string;
}

interface RowProps {
  r: ResourceRef & { kind: string }; row: TableRow; names: readonly string[]; idx: readonly number[]; showNs: boolean;
  ageText: string; extra: ResourceTableProps['extra']; extraVersion: number | undefined;
}

/**
 * One row, rendered again only when its data (a new row object from the watch), its age text or
 * the columns change: a change among 1,000 pods re-renders one row, not 1,000.
 */
class Row extends Component<RowProps> {
  override shouldComponentUpdate(b: RowProps): boolean {
    const a = this.props;
    return !(a.row === b.row && a.ageText === b.ageText && a.names.join() === b.names.join() && a.showNs === b.showNs && a.extraVersion === b.extraVersion && a.r === b.r);
  }
  override render() { return rowView(this.props); }
}

function rowView({ r, row, names, idx, showNs, ageText, extra }: RowProps) {
  const m = metaOf(row);
  return (
    <tr data-name={m.name} data-namespace={m.namespace ?? ''}>
      {showNs && <td>{m.namespace}</td>}
      {names.map((n, j) => {
        if (n.toLowerCase() === 'name') return <td key={n}><a href={objectRoute(r, m.namespace, m.name)}>{m.name}</a></td>;
        const text = n.toLowerCase() === 'age' && ageText ? ageText : cellText(row, idx[j]!);
        return <td key={n} data-col={n.toLowerCase()} class={statusClass(n, text)}>{text}</td>;
      })}
      {extra && <td>{extra.cell(row)}</td>}
      <td class="actions"><a href={objectRoute(r, m.namespace, m.name)}>yaml</a> <a href={chainRoute(r.kind, m.namespace, m.name)}>chain</a></td>
    </tr>
  );
}

/**
 * A live Table of one resource: the apiserver's printed columns (kubectl's own, for every kind
 * including CRDs), updated from a Table watch, with name → object page and a chain link.
 */
export function ResourceTable({ r, namespace, columns, extra, extraVersion, query, testId }: ResourceTableProps) {
  const live = useLive<TableRow>({ path: collectionPath(r, namespace), table: true, ...(query ? { query } : {}) });
  const rows = useSorted(live, rowsByNamespaceName);
  // Ages tick every second; in long lists every 5 s (a tick re-renders each row whose age text changed).
  const now = useNow(rows.length > 200 ? 5000 : 1000);
  if (live.error) return <Problem error={live.error} what={`list ${r.resource}`} />;
  if (!live.synced) return <p class="loading">Loading {r.resource}…</p>;
  const names = columns ?? live.columns.filter((c) => c.priority === 0).map((c) => c.name);
  const idx = names.map((n) => columnIndex(live.columns, n));
  const showNs = r.namespaced && !namespace;
  return (
    <table class="list" data-testid={testId ?? r.resource} data-count={rows.length}>
      <thead><tr>
        {showNs && <th>NAMESPACE</th>}
        {names.map((n) => <th key={n}>{n.toUpperCase()}</th>)}
        {extra && <th>{extra.header}</th>}
        <th />
      </tr></thead>
      <tbody>
        {rows.map((row) => {
          const m = metaOf(row);
          return <Row key={`${m.namespace ?? ''}/${m.name}`} r={r} row={row} names={names} idx={idx} showNs={showNs}
            ageText={m.creationTimestamp ? age(m.creationTimestamp, now) : ''} extra={extra} extraVersion={extraVersion} />;
        })}
      </tbody>
    </table>
  );
}

const GOOD = new Set(['Running', 'Completed', 'Succeeded', 'Active', 'Bound', 'True', 'Ready', 'Complete']);
const PENDING = new Set(['Pending', 'ContainerCreating', 'PodInitializing', 'Terminating', 'Unknown']);

function statusClass(column: string, text: string): string | undefined {
  if (column.toLowerCase() !== 'status') return undefined;
  if (GOOD.has(text)) return 'ok';
  if (PENDING.has(text) || text.startsWith('Init:')) return 'pending';
  return 'bad';
}
