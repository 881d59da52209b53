/**
 * RequestInfo: what a URL addresses (apiserver endpoints/request RequestInfoFactory). Parsed once
 * per request and used by authorization, admission, metrics and the handlers.
 */
import { lookupResource, queryBool, type ResourceDescriptor } from '@mk8s/api';

export type RequestVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceRequestInfo {
  resourceRequest: true;
  verb: RequestVerb;
  /** The HTTP method (upper case). */
  method: string;
  group: string;
  version: string;
  /** The plural resource as written in the URL. */
  resource: string;
  /** Undefined when the URL names no known resource (the handler answers 404). */
  descriptor: ResourceDescriptor | undefined;
  /** '' for cluster-scoped resources and all-namespace requests. */
  namespace: string;
  /** '' for collection requests. */
  name: string;
  /** '' unless a subresource such as status or scale is addressed. */
  subresource: string;
  /** For the proxy subresource: the rest of the path after `/proxy` (upstream: the proxied path), '' otherwise. */
  subpath?: string;
  path: string;
}

export interface NonResourceRequestInfo { resourceRequest: false; verb: string; method: string; path: string }

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

/** Subresources of namespaces: /api/v1/namespaces/{name}/{status|finalize} is not a namespaced collection. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** Finds the served resource of a group, version and plural (the server's registry). */
export type ResourceResolver = (group: string, version: string, resource: string) => ResourceDescriptor | undefined;

/** The scheme's built-in resources (no registry at hand: tests, tools). */
export const schemeResolver: ResourceResolver = (group, version, resource) => {
  const found = lookupResource(group, resource);
  return found && found.version === version ? found : undefined;
};

/**
 * parseRequestInfo maps a method and URL (path plus query) to a RequestInfo. Watch is detected
 * from the legacy /watch/ path segment and from ?watch (any value but false/0).
 */
export function parseRequestInfo(method: string, url: string, resolve: ResourceResolver = schemeResolver): RequestInfo {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? undefined : new URLSearchParams(url.slice(q + 1));
  const parts = path.split('/').filter((p) => p !== '').map(safeDecode);
  const m = method.toUpperCase();
  let group: string; let version: string; let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) { group = ''; version = parts[1]!; rest = parts.slice(2); }
  else if (parts[0] === 'apis' && parts.length >= 4) { group = parts[1]!; version = parts[2]!; rest = parts.slice(3); }
  else return { resourceRequest: false, verb: m.toLowerCase(), method: m, path };

  let watch = false;
  if (rest[0] === 'watch') { watch = true; rest = rest.slice(1); }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length >= 2) {
    if (rest.length > 2 && !(group === '' && NAMESPACE_SUBRESOURCES.has(rest[2]!) && rest.length === 3)) {
      namespace = rest[1]!;
      rest = rest.slice(2);
    }
  }
  const [resource = '', name = '', subresource = '', ...extra] = rest;
  // Only proxy takes a path after the subresource (…/nodes/{name}/proxy/stats/summary).
  if ((extra.length > 0 && subresource !== 'proxy') || resource === '') return { resourceRequest: false, verb: m.toLowerCase(), method: m, path };
  const descriptor = resolve(group, version, resource);
  // ?watch as upstream's ListOptions decoding reads it: True, 1, even a bare ?watch (api/query.ts).
  const isWatch = watch || queryBool(query?.get('watch'));
  let verb: RequestVerb;
  switch (m) {
    case 'GET': case 'HEAD': verb = name ? (isWatch ? 'watch' : 'get') : (isWatch ? 'watch' : 'list'); break;
    case 'POST': verb = 'create'; break;
    case 'PUT': verb = 'update'; break;
    case 'PATCH': verb = 'patch'; break;
    case 'DELETE': verb = name ? 'delete' : 'deletecollection'; break;
    default: verb = 'get';
  }
  const out: ResourceRequestInfo = { resourceRequest: true, verb, method: m, group, version, resource, descriptor, namespace, name, subresource, path };
  if (subresource === 'proxy') {
    // The rest of the path, still encoded, as upstream hands it to the proxy (a trailing slash kept).
    const raw = path.split('/').filter((p) => p !== '');
    const tail = raw.slice(raw.length - extra.length).join('/');
    out.subpath = tail ? `/${tail}${path.endsWith('/') ? '/' : ''}` : '/';
  }
  return out;
}

function safeDecode(s: string): string {
  if (!s.includes('%')) return s;                                    // nothing to decode (almost every segment)
  try { return decodeURIComponent(s); } catch { return s; }
}
