/** Events as a live stream: newest first, as `kubectl get events -w` shows them arrive. */
import type { KubeObject } from '../api';
import { Problem, Section } from '../components';
import { collectionPath, R } from '../discovery';
import { age } from '../format';
import { useLive, useNow, useSorted } from '../hooks';
import { useNamespace } from '../namespace';

interface Event extends KubeObject {
  type?: string; reason?: string; message?: string; count?: number;
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  lastTimestamp?: string; eventTime?: string; firstTimestamp?: string;
  source?: { component?: string }; reportingComponent?: string;
}

const lastSeen = (e: Event): string => e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp ?? '';
const newestFirst = (a: Event, b: Event): number => lastSeen(b).localeCompare(lastSeen(a)) || b.metadata.name.localeCompare(a.metadata.name);
/** Rows shown at most (the stream keeps all; the page stays fast). */
const MAX_ROWS = 500;

export function EventsPage() {
  const ns = useNamespace();
  const live = useLive<Event>({ path: collectionPath(R.events, ns) });
  const list = useSorted(live, newestFirst);
  const now = useNow();
  if (live.error) return <Problem error={live.error} what="list events" />;
  return (
    <Section title="Events" count={live.synced ? list.length : undefined}>
      {!live.synced ? <p class="loading">Loading events…</p> : (
        <table class="list" data-testid="events" data-count={list.length}>
          <thead><tr><th>LAST SEEN</th><th>TYPE</th><th>REASON</th><th>OBJECT</th><th>SOURCE</th><th>MESSAGE</th></tr></thead>
          <tbody>
            {list.slice(0, MAX_ROWS).map((e) => (
              <tr key={`${e.metadata.namespace}/${e.metadata.name}`} class={e.type === 'Warning' ? 'warning' : undefined}>
                <td>{age(lastSeen(e), now)}</td>
                <td>{e.type}</td>
                <td>{e.reason}</td>
                <td>{(e.involvedObject?.kind ?? '').toLowerCase()}/{e.involvedObject?.name}</td>
                <td>{e.source?.component ?? e.reportingComponent ?? ''}</td>
                <td class="message">{e.message}{(e.count ?? 1) > 1 ? ` (x${e.count})` : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
