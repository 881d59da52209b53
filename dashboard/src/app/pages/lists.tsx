/** The list pages: namespaces, workloads, pods, services (with endpoints) and any served kind. */
import { useEffect, useState } from 'preact/hooks';
import { apiFetch, type TableRow } from '../api';
import { Problem, ResourceTable, Section } from '../components';
import { collectionPath, discover, R, type ApiResource } from '../discovery';
import { cellText, columnIndex, metaOf } from '../format';
import { useLive } from '../hooks';
import { useNamespace } from '../namespace';

export function NamespacesPage() {
  return <Section title="Namespaces"><ResourceTable r={R.namespaces} /></Section>;
}

const WORKLOADS = [R.deployments, R.replicasets, R.statefulsets, R.daemonsets, R.jobs, R.cronjobs];

export function WorkloadsPage() {
  const ns = useNamespace();
  return (
    <>
      {WORKLOADS.map((r) => <Section key={r.resource} title={r.kind + 's'}><ResourceTable r={r} namespace={ns} /></Section>)}
      <Section title="Every kind the cluster serves"><KindIndex /></Section>
    </>
  );
}

/** Links to the list of each resource discovery reports. */
function KindIndex() {
  const [all, setAll] = useState<ApiResource[] | undefined>();
  const [err, setErr] = useState<unknown>();
  useEffect(() => { discover(apiFetch).then(setAll, setErr); }, []);
  if (err) return <p class="problem">Discovery failed: {String((err as Error).message ?? err)}</p>;
  if (!all) return <p class="loading">Discovering…</p>;
  return (
    <ul class="kinds" data-testid="kinds">
      {all.map((r) => (
        <li key={`${r.group}/${r.resource}`}><a href={`#/resources/${r.group || 'core'}/${r.version}/${r.resource}`}>{r.kind}</a> <small>{r.group || 'core'}/{r.version}</small></li>
      ))}
    </ul>
  );
}

/** #/resources/<group>/<version>/<resource>: the live Table of any kind. */
export function ResourcesPage({ group, version, resource }: { group: string; version: string; resource: string }) {
  const ns = useNamespace();
  const [r, setR] = useState<ApiResource | undefined>();
  const [err, setErr] = useState<unknown>();
  const g = group === 'core' ? '' : group;
  useEffect(() => {
    discover(apiFetch).then((all) => {
      const found = all.find((x) => x.group === g && x.resource === resource);
      if (found) setR(found); else setErr(new Error(`the cluster does not serve ${resource} in ${group}/${version}`));
    }, setErr);
  }, [g, version, resource]);
  if (err) return <p class="problem">{String((err as Error).message ?? err)}</p>;
  if (!r) return <p class="loading">Loading…</p>;
  return <Section title={`${r.kind} (${group}/${version})`}><ResourceTable r={r} namespace={ns} /></Section>;
}

export function PodsPage() {
  const ns = useNamespace();
  return (
    <Section title="Pods">
      <ResourceTable r={R.pods} namespace={ns} columns={['Name', 'Ready', 'Status', 'Restarts', 'Node', 'Age']}
        extra={{ header: 'LOGS', cell: (row) => { const m = metaOf(row); return <a href={`#/logs/${encodeURIComponent(m.namespace ?? '')}/${encodeURIComponent(m.name)}`}>logs</a>; } }} />
    </Section>
  );
}

export function ServicesPage() {
  const ns = useNamespace();
  // Endpoints by "namespace/name", from the apiserver's Endpoints printer (kubectl get endpoints).
  const eps = useLive<TableRow>({ path: collectionPath(R.endpoints, ns), table: true });
  const col = columnIndex(eps.columns, 'Endpoints');
  return (
    <Section title="Services">
      {eps.error && <Problem error={eps.error} what="list endpoints" />}
      <ResourceTable r={R.services} namespace={ns} extraVersion={eps.version} extra={{ header: 'ENDPOINTS', cell: (row) => {
        const m = metaOf(row);
        const ep = eps.items.get(`${m.namespace}/${m.name}`);
        return <span data-col="endpoints">{ep ? cellText(ep, col) : '<none>'}</span>;
      } }} />
    </Section>
  );
}
