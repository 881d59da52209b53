/**
 * Discovery (client-go discovery): the resources the apiserver serves, read from /api and /apis
 * with their verbs, at each group's preferred version (ServerPreferredResources). Custom resources
 * appear here once their CRD is established, which is how the namespace controller and garbage
 * collector learn of them. `CachedDiscovery` memoises the answer for a TTL (upstream's memory cache
 * + periodic reset).
 */
import type { ResourceDescriptor, Verb } from '@mk8s/api';

/** One entry of an APIResourceList as /api/v1 or /apis/{group}/{version} serves it. */
export interface APIResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  group?: string;
  version?: string;
}
export interface APIResourceList { groupVersion: string; resources: APIResource[] }
export interface APIGroup { name: string; versions: { groupVersion: string; version: string }[]; preferredVersion?: { groupVersion: string; version: string } }

/** Descriptors from APIResourceLists (pure): subresources (`pods/status`) fold into their parent. */
export function resourcesFromDiscovery(lists: readonly APIResourceList[]): ResourceDescriptor[] {
  const out: ResourceDescriptor[] = [];
  for (const l of lists) {
    const slash = l.groupVersion.indexOf('/');
    const group = slash < 0 ? '' : l.groupVersion.slice(0, slash);
    const version = slash < 0 ? l.groupVersion : l.groupVersion.slice(slash + 1);
    const subs = new Map<string, string[]>();
    for (const r of l.resources) {
      const i = r.name.indexOf('/');
      if (i > 0) subs.set(r.name.slice(0, i), [...(subs.get(r.name.slice(0, i)) ?? []), r.name.slice(i + 1)]);
    }
    for (const r of l.resources) {
      if (r.name.includes('/')) continue;
      out.push({
        group, version, kind: r.kind, listKind: `${r.kind}List`, resource: r.name,
        singular: r.singularName || r.kind.toLowerCase(), namespaced: r.namespaced,
        shortNames: r.shortNames ?? [], categories: r.categories ?? [], verbs: r.verbs as Verb[],
        subresources: subs.get(r.name) ?? [],
      });
    }
  }
  return out;
}

/**
 * Some groups' discovery failed (upstream ErrGroupDiscoveryFailed, e.g. an unavailable aggregated
 * API): `resources` holds what the other groups reported.
 */
export class GroupDiscoveryFailedError extends Error {
  constructor(readonly groups: Map<string, unknown>, readonly resources: ResourceDescriptor[]) {
    super(`unable to retrieve the complete list of server APIs: ${[...groups].map(([gv, e]) => `${gv}: ${(e as Error)?.message ?? String(e)}`).join(', ')}`);
    this.name = 'GroupDiscoveryFailedError';
  }
}

/** The resources a discovery call found, even when it failed for some groups; rethrows other failures. */
export function partialResources(err: unknown): ResourceDescriptor[] {
  if (err instanceof GroupDiscoveryFailedError) return err.resources;
  throw err;
}

/** Source of the served resources. */
export interface DiscoveryClient {
  /** Every served resource at its group's preferred version; GroupDiscoveryFailedError (with the rest) when some groups fail. */
  serverPreferredResources(signal?: AbortSignal): Promise<ResourceDescriptor[]>;
}

/** Anything that can GET a path as text (RestClientset). */
export interface RawGetter { getRaw(path: string, o?: { signal?: AbortSignal }): Promise<string> }

export function hasRawGet(c: unknown): c is RawGetter {
  return typeof (c as { getRaw?: unknown } | null)?.getRaw === 'function';
}

/** Discovery over HTTP: /api, /api/{v}, /apis, /apis/{group}/{preferred}. */
export class RestDiscovery implements DiscoveryClient {
  constructor(private readonly c: RawGetter) {}

  private async get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return JSON.parse(await this.c.getRaw(path, signal ? { signal } : {})) as T;
  }

  async serverPreferredResources(signal?: AbortSignal): Promise<ResourceDescriptor[]> {
    const [core, groups] = await Promise.all([
      this.get<{ versions: string[] }>('/api', signal),
      this.get<{ groups: APIGroup[] }>('/apis', signal),
    ]);
    const gvs = [
      ...(core.versions.length ? [core.versions[0]!] : []),
      ...groups.groups.map((g) => (g.preferredVersion ?? g.versions[0])!.groupVersion),
    ];
    const settled = await Promise.allSettled(gvs.map((gv) => this.get<APIResourceList>(gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`, signal)));
    const lists: APIResourceList[] = [];
    const failed = new Map<string, unknown>();
    settled.forEach((r, i) => { if (r.status === 'fulfilled') lists.push(r.value); else failed.set(gvs[i]!, r.reason); });
    const resources = resourcesFromDiscovery(lists);
    if (failed.size) throw new GroupDiscoveryFailedError(failed, resources);
    return resources;
  }
}

/** Discovery over a fixed list (fakes, tests). */
export class StaticDiscovery implements DiscoveryClient {
  constructor(public resources: readonly ResourceDescriptor[]) {}
  async serverPreferredResources(): Promise<ResourceDescriptor[]> { return [...this.resources]; }
}

/** Memoises another DiscoveryClient for ttlMs; concurrent callers share one request. */
export class CachedDiscovery implements DiscoveryClient {
  private cached: { at: number; value: ResourceDescriptor[] } | undefined;
  private pending: Promise<ResourceDescriptor[]> | undefined;

  constructor(private readonly inner: DiscoveryClient, private readonly ttlMs = 30_000, private readonly now: () => number = Date.now) {}

  /** Forget the cached answer (upstream's Invalidate). */
  invalidate(): void { this.cached = undefined; }

  async serverPreferredResources(signal?: AbortSignal): Promise<ResourceDescriptor[]> {
    if (this.cached && this.now() - this.cached.at < this.ttlMs) return this.cached.value;
    this.pending ??= this.inner.serverPreferredResources(signal).then((value) => {
      this.cached = { at: this.now(), value };
      return value;
    }).finally(() => { this.pending = undefined; });
    return this.pending;
  }
}
