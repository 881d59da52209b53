/**
 * Pure builders for the discovery documents (apiserver endpoints/discovery). Everything is derived
 * from the scheme's ResourceDescriptors so routes, discovery and OpenAPI never disagree.
 */
import { createHash } from 'node:crypto';
import type { ResourceDescriptor } from '@mk8s/api';
import { subresourceInfo, type ResolvedSubresource } from './subresources.js';

/** A served resource and the subresources it registered. */
export interface DiscoveredResource { descriptor: ResourceDescriptor; subresources: readonly ResolvedSubresource[] }

/** Descriptors with the well-known facts of the subresources they name (no registry at hand). */
export function discoveredFromDescriptors(resources: readonly ResourceDescriptor[]): DiscoveredResource[] {
  return resources.map((r) => ({ descriptor: r, subresources: r.subresources.map((sub) => subresourceInfo(r, sub)) }));
}

/** One served group/version and its resources, sorted by name like upstream. */
export interface GroupVersion { group: string; version: string; resources: DiscoveredResource[] }

export interface ApiResource {
  name: string; singularName: string; namespaced: boolean; group?: string; version?: string; kind: string;
  verbs: string[]; shortNames?: string[]; categories?: string[]; storageVersionHash?: string;
}

/**
 * Groups resources by group/version, core first, then groups in order of first appearance
 * (the order kubectl uses to expand categories such as `all`).
 */
export function groupVersions(resources: readonly DiscoveredResource[]): GroupVersion[] {
  const out: GroupVersion[] = [];
  for (const d of resources) {
    const r = d.descriptor;
    let gv = out.find((g) => g.group === r.group && g.version === r.version);
    if (!gv) { gv = { group: r.group, version: r.version, resources: [] }; out.push(gv); }
    gv.resources.push(d);
  }
  const name = (d: DiscoveredResource) => d.descriptor.resource;
  for (const gv of out) gv.resources.sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
  // Stable sort: the core group ('') first, others keep their order.
  return out.sort((a, b) => (a.group === '' ? 0 : 1) - (b.group === '' ? 0 : 1));
}

/** Upstream's storageversionhash.StorageVersionHash: base64(sha256("group/version/kind")[:8]). */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

const sortedSubresources = (subs: readonly ResolvedSubresource[]): ResolvedSubresource[] =>
  [...subs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const groupVersionString = (group: string, version: string): string => (group ? `${group}/${version}` : version);

/** GET /api/v1, /apis/<g>/<v>: an APIResourceList with subresources as `<parent>/<sub>` entries. */
export function apiResourceList(gv: GroupVersion): Record<string, unknown> {
  const resources: ApiResource[] = [];
  for (const { descriptor: r, subresources } of gv.resources) {
    const entry: ApiResource = { name: r.resource, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: [...r.verbs] };
    if (r.shortNames.length) entry.shortNames = [...r.shortNames];
    if (r.categories.length) entry.categories = [...r.categories];
    entry.storageVersionHash = storageVersionHash(r.group, r.version, r.kind);
    resources.push(entry);
    for (const s of sortedSubresources(subresources)) {
      const e: ApiResource = { name: `${r.resource}/${s.name}`, singularName: '', namespaced: r.namespaced, kind: s.kind, verbs: [...s.verbs] };
      if (s.group !== r.group || s.version !== r.version) { e.group = s.group; e.version = s.version; }
      resources.push(e);
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersionString(gv.group, gv.version), resources };
}

/** GET /api (legacy): APIVersions. */
export function apiVersions(gvs: readonly GroupVersion[], serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: gvs.filter((g) => g.group === '').map((g) => g.version),
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** One APIGroup entry of /apis (legacy); the first version listed is the preferred one. */
export function apiGroup(group: string, gvs: readonly GroupVersion[]): Record<string, unknown> {
  const versions = gvs.filter((g) => g.group === group).map((g) => ({ groupVersion: `${group}/${g.version}`, version: g.version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0] };
}

/** GET /apis (legacy): APIGroupList of every non-core group. */
export function apiGroupList(gvs: readonly GroupVersion[]): Record<string, unknown> {
  const groups = [...new Set(gvs.filter((g) => g.group !== '').map((g) => g.group))];
  return {
    kind: 'APIGroupList', apiVersion: 'v1',
    groups: groups.map((g) => { const { kind: _k, apiVersion: _a, ...rest } = apiGroup(g, gvs); return rest; }),
  };
}

export type AggregatedVersion = 'v2' | 'v2beta1';

/**
 * GET /api or /apis with the aggregated Accept: an APIGroupDiscoveryList (apidiscovery.k8s.io).
 * `legacy` = true builds the /api document (the core group only), else the /apis one.
 * responseKind is mandatory: client-go drops resources and subresources without it.
 */
export function aggregatedDiscovery(gvs: readonly GroupVersion[], legacy: boolean, version: AggregatedVersion = 'v2'): Record<string, unknown> {
  const selected = gvs.filter((g) => (legacy ? g.group === '' : g.group !== ''));
  const groups = [...new Set(selected.map((g) => g.group))];
  const items = groups.map((group) => ({
    metadata: group ? { name: group } : {},
    versions: selected.filter((g) => g.group === group).map((gv) => ({
      version: gv.version,
      resources: gv.resources.map(({ descriptor: r, subresources }) => {
        const res: Record<string, unknown> = {
          resource: r.resource,
          responseKind: { group: r.group, version: r.version, kind: r.kind },
          scope: r.namespaced ? 'Namespaced' : 'Cluster',
          singularResource: r.singular,
          verbs: [...r.verbs],
        };
        if (r.shortNames.length) res['shortNames'] = [...r.shortNames];
        if (r.categories.length) res['categories'] = [...r.categories];
        if (subresources.length) {
          res['subresources'] = sortedSubresources(subresources).map((s) => {
            return { subresource: s.name, responseKind: { group: s.group, version: s.version, kind: s.kind }, verbs: [...s.verbs] };
          });
        }
        return res;
      }),
      freshness: 'Current',
    })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}

/** The exact Content-Type upstream answers aggregated discovery with; client-go decides the format from it. */
export function aggregatedContentType(version: AggregatedVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

/**
 * Picks the aggregated discovery version the client asked for, in Accept order, or undefined for
 * the legacy format (plain application/json, any wildcard, or no Accept).
 */
export function negotiateAggregated(accept: string | undefined): AggregatedVersion | undefined {
  if (!accept) return undefined;
  for (const clause of accept.split(',')) {
    const [type, ...params] = clause.split(';').map((s) => s.trim());
    if (type !== 'application/json') continue;
    const p = new Map(params.map((kv) => { const i = kv.indexOf('='); return [kv.slice(0, i).trim(), kv.slice(i + 1).trim()] as const; }));
    if (p.get('g') !== 'apidiscovery.k8s.io' || p.get('as') !== 'APIGroupDiscoveryList') continue;
    const v = p.get('v');
    if (v === 'v2' || v === 'v2beta1') return v;
  }
  return undefined;
}
