/** Cluster: every node with its conditions, capacity/allocatable, pods and Lease heartbeat age. */
import type { KubeObject, TableRow } from '../api';
import { Problem, Section } from '../components';
import { chainRoute, objectRoute, R } from '../discovery';
import { age, byNamespaceName, cellText, columnIndex } from '../format';
import { useLive, useNow, useSorted } from '../hooks';

interface NodeCondition { type: string; status: string; reason?: string; message?: string }
interface Node extends KubeObject {
  spec?: { unschedulable?: boolean; podCIDR?: string };
  status?: { conditions?: NodeCondition[]; capacity?: Record<string, string>; allocatable?: Record<string, string>; nodeInfo?: { kubeletVersion?: string }; addresses?: { type: string; address: string }[] };
}
interface Lease extends KubeObject { spec?: { renewTime?: string; holderIdentity?: string } }

/** A condition is healthy when Ready is True and every pressure/other condition is False. */
const healthy = (c: NodeCondition): boolean => (c.type === 'Ready' ? c.status === 'True' : c.status === 'False');

export function ClusterPage() {
  const nodes = useLive<Node>({ path: '/api/v1/nodes' });
  const leases = useLive<Lease>({ path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases' });
  const pods = useLive<TableRow>({ path: '/api/v1/pods', table: true });
  const now = useNow();
  const list = useSorted(nodes, byNamespaceName);
  const podsPerNode = new Map<string, number>();
  const nodeCol = columnIndex(pods.columns, 'Node');
  for (const row of pods.items.values()) {
    const n = cellText(row, nodeCol);
    podsPerNode.set(n, (podsPerNode.get(n) ?? 0) + 1);
  }
  if (nodes.error) return <Problem error={nodes.error} what="list nodes" />;
  return (
    <Section title="Nodes" count={nodes.synced ? list.length : undefined}>
      {!nodes.synced ? <p class="loading">Loading nodes…</p> : (
        <table class="list" data-testid="nodes" data-count={list.length}>
          <thead><tr><th>NAME</th><th>STATUS</th><th>CONDITIONS</th><th>CPU (cap / alloc)</th><th>MEMORY (cap / alloc)</th><th>PODS</th><th>LEASE</th><th>VERSION</th><th>AGE</th><th /></tr></thead>
          <tbody>
            {list.map((n) => {
              const conds = n.status?.conditions ?? [];
              const ready = conds.find((c) => c.type === 'Ready');
              const status = (ready?.status === 'True' ? 'Ready' : 'NotReady') + (n.spec?.unschedulable ? ',SchedulingDisabled' : '');
              const cap = n.status?.capacity ?? {};
              const alloc = n.status?.allocatable ?? {};
              const lease = leases.items.get(`kube-node-lease/${n.metadata.name}`);
              return (
                <tr key={n.metadata.name} data-name={n.metadata.name}>
                  <td><a href={objectRoute(R.nodes, undefined, n.metadata.name)}>{n.metadata.name}</a></td>
                  <td class={ready?.status === 'True' ? 'ok' : 'bad'} data-col="status">{status}</td>
                  <td class="conditions">{conds.map((c) => (
                    <span key={c.type} class={`chip ${healthy(c) ? 'ok' : 'bad'}`} title={`${c.reason ?? ''}: ${c.message ?? ''}`}>{c.type}={c.status}</span>
                  ))}</td>
                  <td>{cap['cpu'] ?? '?'} / {alloc['cpu'] ?? '?'}</td>
                  <td>{cap['memory'] ?? '?'} / {alloc['memory'] ?? '?'}</td>
                  <td data-col="pods">{pods.synced ? podsPerNode.get(n.metadata.name) ?? 0 : '…'} / {alloc['pods'] ?? '?'}</td>
                  <td data-col="lease">{leases.error ? (leases.error.code === 403 ? 'Forbidden' : 'error') : lease?.spec?.renewTime ? `renewed ${age(lease.spec.renewTime, now)} ago` : '<none>'}</td>
                  <td>{n.status?.nodeInfo?.kubeletVersion ?? ''}</td>
                  <td>{age(n.metadata.creationTimestamp, now)}</td>
                  <td class="actions"><a href={chainRoute('Node', undefined, n.metadata.name)}>chain</a></td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Section>
  );
}
