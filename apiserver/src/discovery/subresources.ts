/**
 * What each subresource answers with, as upstream's discovery reports it. Most subresources
 * return the parent kind; a few return a kind of another group (scale → autoscaling/v1 Scale,
 * eviction → policy/v1 Eviction), and kubectl relies on those (scale, drain).
 */
import type { ResourceDescriptor } from '@mk8s/api';

export interface SubresourceInfo {
  /** undefined = the parent's group/version. */
  group?: string;
  version?: string;
  /** undefined = the parent's kind. */
  kind?: string;
  verbs: readonly string[];
}

const GET_PATCH_UPDATE = ['get', 'patch', 'update'] as const;

const KNOWN: Record<string, SubresourceInfo> = {
  status: { verbs: GET_PATCH_UPDATE },
  scale: { group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: GET_PATCH_UPDATE },
  binding: { kind: 'Binding', verbs: ['create'] },
  log: { verbs: ['get'] },
  exec: { kind: 'PodExecOptions', verbs: ['create', 'get'] },
  attach: { kind: 'PodAttachOptions', verbs: ['create', 'get'] },
  portforward: { kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
  proxy: { kind: 'PodProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
  eviction: { group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] },
  ephemeralcontainers: { verbs: GET_PATCH_UPDATE },
  finalize: { verbs: ['update'] },
  approval: { verbs: GET_PATCH_UPDATE },
  token: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] },
};

/** The discovery facts of a well-known subresource by name (unknown: the parent kind, get). */
export function knownSubresource(sub: string): SubresourceInfo {
  return KNOWN[sub] ?? { verbs: ['get'] };
}

/** A subresource's facts with the parent's group/version/kind filled in where it gives none. */
export function resolveSubresource(parent: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>, sub: string, s: SubresourceInfo): ResolvedSubresource {
  return { name: sub, group: s.group ?? parent.group, version: s.version ?? parent.version, kind: s.kind ?? parent.kind, verbs: s.verbs };
}

/** Resolved subresource info: group/version/kind always set. */
export interface ResolvedSubresource { name: string; group: string; version: string; kind: string; verbs: readonly string[] }

/** Info for `<parent>/<sub>`; unknown subresources are reported as returning the parent kind with get. */
export function subresourceInfo(parent: ResourceDescriptor, sub: string): ResolvedSubresource {
  const k = KNOWN[sub] ?? { verbs: ['get'] };
  let kind = k.kind ?? parent.kind;
  if (sub === 'proxy' && parent.kind === 'Node') kind = 'NodeProxyOptions';
  if (sub === 'proxy' && parent.kind === 'Service') kind = 'ServiceProxyOptions';
  return { name: sub, group: k.group ?? parent.group, version: k.version ?? parent.version, kind, verbs: k.verbs };
}
