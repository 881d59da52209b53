/**
 * The app shell: top bar (namespace, log out), navigation and the hash router.
 * Routes: #/cluster #/namespaces #/workloads #/pods #/services #/events
 * #/resources/<group>/<version>/<resource>  #/object/<group>/<version>/<resource>/<namespace|_>/<name>
 * #/logs/<namespace>/<pod>[/<container>]  #/chain/<kind>/<namespace|_>/<name>
 */
import { useEffect, useState } from 'preact/hooks';
import { apiFetch, currentToken, setToken, type TableRow } from './api';
import { ChainView } from './chain/index';
import { useLive, useRoute, useSorted } from './hooks';
import { rowsByNamespaceName, metaOf } from './format';
import { setNamespace, useNamespace } from './namespace';
import { ClusterPage } from './pages/cluster';
import { EventsPage } from './pages/events';
import { NamespacesPage, PodsPage, ResourcesPage, ServicesPage, WorkloadsPage } from './pages/lists';
import { LogsPage } from './pages/logs';
import { ObjectPage } from './pages/object';

const NAV: [string, string][] = [
  ['/cluster', 'Cluster'], ['/namespaces', 'Namespaces'], ['/workloads', 'Workloads'], ['/pods', 'Pods'],
  ['/services', 'Services'], ['/events', 'Events'],
];

const dec = (s: string | undefined): string => decodeURIComponent(s ?? '');
const nsOf = (s: string | undefined): string => (s === '_' ? '' : dec(s));

/** The page of a route (pure: route string → element). */
export function page(route: string) {
  const [head, ...p] = route.split('/').filter(Boolean);
  switch (head) {
    case 'cluster': return <ClusterPage />;
    case 'namespaces': return <NamespacesPage />;
    case 'workloads': return <WorkloadsPage />;
    case 'pods': return <PodsPage />;
    case 'services': return <ServicesPage />;
    case 'events': return <EventsPage />;
    case 'resources': return <ResourcesPage group={dec(p[0])} version={dec(p[1])} resource={dec(p[2])} />;
    case 'object': {
      const group = dec(p[0]) === 'core' ? '' : dec(p[0]);
      const ns = nsOf(p[3]);
      return <ObjectPage key={route} r={{ group, version: dec(p[1]), resource: dec(p[2]), namespaced: !!ns }} namespace={ns || undefined} name={dec(p[4])} />;
    }
    case 'logs': return <LogsPage key={route} namespace={dec(p[0])} name={dec(p[1])} container={p[2] ? dec(p[2]) : undefined} />;
    case 'chain': return <ChainView key={route} kind={dec(p[0])} namespace={nsOf(p[1])} name={dec(p[2])} api={apiFetch} />;
    default: return <p class="problem">No page {route}</p>;
  }
}

export function App() {
  const route = useRoute();
  const [token, setTok] = useState(currentToken());
  if (!token) return <Login onToken={(t) => { setToken(t); setTok(t); }} />;
  return (
    <div class="shell">
      <header>
        <a class="brand" href="#/cluster">mk8s</a>
        <nav>{NAV.map(([r, label]) => <a key={r} href={`#${r}`} class={route.startsWith(r) ? 'current' : undefined}>{label}</a>)}</nav>
        <NamespacePicker />
        <button type="button" class="logout" onClick={() => { setToken(null); setTok(null); }}>Log out</button>
      </header>
      <main>{page(route)}</main>
    </div>
  );
}

function NamespacePicker() {
  const ns = useNamespace();
  const live = useLive<TableRow>({ path: '/api/v1/namespaces', table: true });
  const names = useSorted(live, rowsByNamespaceName).map((r) => metaOf(r).name);
  return (
    <select class="namespace" data-testid="namespace" value={ns} onChange={(e) => setNamespace((e.target as HTMLSelectElement).value)}
      title={live.error ? `namespaces: ${live.error.reason}` : 'namespace'}>
      <option value="">all namespaces</option>
      {[...new Set([...names, ...(ns ? [ns] : [])])].map((n) => <option key={n} value={n}>{n}</option>)}
    </select>
  );
}

/** No token yet: say how to get a login URL, or take a pasted token. */
function Login({ onToken }: { onToken: (t: string) => void }) {
  const [text, setText] = useState('');
  useEffect(() => { document.title = 'mk8s: log in'; }, []);
  return (
    <div class="login" data-testid="login">
      <h1>mk8s dashboard</h1>
      <p>The dashboard acts with your own credentials only. Open the URL <code>mkctl dashboard --url</code> prints, or paste a bearer token (a ServiceAccount token: <code>kubectl create token NAME</code>).</p>
      <form onSubmit={(e) => { e.preventDefault(); if (text.trim()) onToken(text.trim()); }}>
        <input type="password" autocomplete="off" placeholder="bearer token" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        <button type="submit">Log in</button>
      </form>
    </div>
  );
}
