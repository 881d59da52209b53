/** The resources the cluster serves (discovery: /api/v1, /apis, /apis/<group>/<version>). */
import { apiJson, type ApiFetch } from './api';

export interface ApiResource { group: string; version: string; resource: string; kind: string; namespaced: boolean; verbs: readonly string[] }

interface ResourceList { resources: { name: string; kind: string; namespaced: boolean; verbs: string[] }[] }
interface GroupList { groups: { name: string; preferredVersion?: { version: string }; versions: { version: string }[] }[] }

let cached: Promise<ApiResource[]> | undefined;

/** Every listable resource, core first, then groups in discovery order. Cached; failures are retried next call. */
export function discover(api: ApiFetch): Promise<ApiResource[]> {
  cached ??= load(api).catch((err: unknown) => { cached = undefined; throw err; });
  return cached;
}

async function load(api: ApiFetch): Promise<ApiResource[]> {
  const of = (group: string, version: string, l: ResourceList): ApiResource[] => l.resources
    .filter((r) => !r.name.includes('/') && r.verbs.includes('list'))
    .map((r) => ({ group, version, resource: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs }));
  const [core, groups] = await Promise.all([apiJson<ResourceList>(api, '/api/v1'), apiJson<GroupList>(api, '/apis')]);
  const lists = await Promise.all(groups.groups.map(async (g) => {
    const v = g.preferredVersion?.version ?? g.versions[0]?.version ?? 'v1';
    return of(g.name, v, await apiJson<ResourceList>(api, `/apis/${g.name}/${v}`).catch(() => ({ resources: [] })));
  }));
  return [...of('', 'v1', core), ...lists.flat()];
}

/** A resource by its path segments (group '' for core). */
export interface ResourceRef { group: string; version: string; resource: string; namespaced: boolean }

export const prefix = (r: Pick<ResourceRef, 'group' | 'version'>): string => (r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`);

/** The collection path, in one namespace or across all. */
export function collectionPath(r: ResourceRef, namespace?: string): string {
  return r.namespaced && namespace ? `${prefix(r)}/namespaces/${encodeURIComponent(namespace)}/${r.resource}` : `${prefix(r)}/${r.resource}`;
}

export function objectPath(r: ResourceRef, namespace: string | undefined, name: string): string {
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
}

/** The app route of an object's page. */
export function objectRoute(r: Pick<ResourceRef, 'group' | 'version' | 'resource'>, namespace: string | undefined, name: string): string {
  return `#/object/${r.group || 'core'}/${r.version}/${r.resource}/${encodeURIComponent(namespace || '_')}/${encodeURIComponent(name)}`;
}

/** The app route of an object's chain view. */
export function chainRoute(kind: string, namespace: string | undefined, name: string): string {
  return `#/chain/${encodeURIComponent(kind)}/${encodeURIComponent(namespace || '_')}/${encodeURIComponent(name)}`;
}

/** Well-known resources the pages use (no discovery round-trip needed). */
export const R = {
  pods: { group: '', version: 'v1', resource: 'pods', namespaced: true, kind: 'Pod' },
  nodes: { group: '', version: 'v1', resource: 'nodes', namespaced: false, kind: 'Node' },
  namespaces: { group: '', version: 'v1', resource: 'namespaces', namespaced: false, kind: 'Namespace' },
  services: { group: '', version: 'v1', resource: 'services', namespaced: true, kind: 'Service' },
  endpoints: { group: '', version: 'v1', resource: 'endpoints', namespaced: true, kind: 'Endpoints' },
  events: { group: '', version: 'v1', resource: 'events', namespaced: true, kind: 'Event' },
  deployments: { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true, kind: 'Deployment' },
  replicasets: { group: 'apps', version: 'v1', resource: 'replicasets', namespaced: true, kind: 'ReplicaSet' },
  statefulsets: { group: 'apps', version: 'v1', resource: 'statefulsets', namespaced: true, kind: 'StatefulSet' },
  daemonsets: { group: 'apps', version: 'v1', resource: 'daemonsets', namespaced: true, kind: 'DaemonSet' },
  jobs: { group: 'batch', version: 'v1', resource: 'jobs', namespaced: true, kind: 'Job' },
  cronjobs: { group: 'batch', version: 'v1', resource: 'cronjobs', namespaced: true, kind: 'CronJob' },
} as const satisfies Record<string, ApiResource | Omit<ApiResource, 'verbs'>>;
