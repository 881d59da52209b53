/**
 * The subresources a resource registers (upstream's StatusREST, ScaleREST, BindingREST, LogREST,
 * EvictionREST, TokenREST, FinalizeREST): each one its discovery facts plus a `serve` over the
 * generic handler helpers. The handler finds them in the registry entry; nothing in handlers.ts
 * names a resource.
 */
import { ApiError, PodDisruptionBudgets, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext, Store } from '../registry/generic/store.js';
import type { Subresource, SubresourceDiscovery } from '../registry/registry.js';
import type { UpdateTarget } from '../registry/generic/strategy.js';
import { applyPatch } from '../registry/generic/patch.js';
import { desiredReplicas, scaleOf } from '../registry/generic/scale.js';
import { bindPod } from '../registry/core/pods/subresources.js';
import { evictPod } from '../registry/core/pods/eviction.js';
import { createToken } from '../registry/core/serviceaccounts/token.js';
import { knownSubresource } from '../discovery/subresources.js';
import { decodeBody, decodeObject, patchTypeOf } from './body.js';
import type { ResourceRequestInfo } from './request-info.js';
import { JSON_CONTENT_TYPE, notFoundError, successStatus } from './status.js';
import { proxyLogs, proxyNode } from './kubelet-proxy.js';
import { patchObject, sendObject, type HandlerDeps, type Query } from './handlers.js';

/** One subresource request, as the generic handler hands it over (name and verb already checked). */
export interface SubresourceContext {
  deps: HandlerDeps;
  /** The parent resource's store. */
  store: Store;
  info: ResourceRequestInfo;
  rc: RequestContext;
  req: FastifyRequest;
  reply: FastifyReply;
  q: Query;
}

/**
 * A part of the object written through its own endpoint (status, namespaces' finalize): GET reads
 * the whole object, PUT and PATCH write only that part (the strategy decides what "only" means).
 */
export function partSubresource(target: Exclude<UpdateTarget, 'main'>, discovery: SubresourceDiscovery = knownSubresource(target)): Subresource {
  return {
    ...discovery,
    serve: async ({ deps, store, info, rc, req, reply, q }) => {
      const r = store.resource;
      if (info.verb === 'get') return sendObject(deps, reply, req, r, await store.get(info.namespace, info.name), 200, q);
      if (info.verb === 'update') {
        const body = decodeObject(req.body, req.headers['content-type'], r, (v, k) => deps.registry.lookupKind(v, k) !== undefined) as KubeObject;
        const { object } = await store.update(rc, info.namespace, info.name, body, target);
        return sendObject(deps, reply, req, r, object, 200, q);
      }
      const { object } = await patchObject(deps, store, rc, req, info.namespace, info.name, target, q);
      return sendObject(deps, reply, req, r, object, 200, q);
    },
  };
}

export const statusSubresource: Subresource = partSubresource('status');
export const finalizeSubresource: Subresource = partSubresource('finalize');
/** certificatesigningrequests/approval: the Approved/Denied conditions (`kubectl certificate approve|deny`). */
export const approvalSubresource: Subresource = partSubresource('approval');

/** Where a resource keeps what autoscaling/v1 Scale shows. */
export interface ScaleMapping {
  /** The Scale of obj. */
  toScale(obj: KubeObject): KubeObject;
  /** obj with spec replicas set (obj is a copy the caller owns). */
  withReplicas(obj: KubeObject, replicas: number): KubeObject;
}

/** The built-in kinds' mapping: spec.replicas, status.replicas, spec.selector (a label map for RCs). */
export function specReplicasScale(o: { setSelector?: boolean } = {}): ScaleMapping {
  return {
    toScale: (obj) => scaleOf(obj, o),
    withReplicas: (obj, replicas) => {
      obj['spec'] = { ...((obj['spec'] ?? {}) as Record<string, unknown>), replicas };
      return obj;
    },
  };
}

/** /scale: GET, PUT and PATCH of an autoscaling/v1 Scale view of the object (upstream ScaleREST). */
export function scaleSubresource(mapping: ScaleMapping = specReplicasScale()): Subresource {
  return {
    ...knownSubresource('scale'),
    serve: async ({ store, info, rc, req, reply }) => {
      const ns = info.namespace; const name = info.name;
      const send = (obj: KubeObject, code = 200) => reply.code(code).type(JSON_CONTENT_TYPE).send(mapping.toScale(obj));
      if (info.verb === 'get') return send(await store.get(ns, name));
      let precondition: string | undefined;
      const compute = (current: KubeObject | undefined): KubeObject => {
        if (!current) throw store.rewrite(new ApiError('NotFound', ''), name);
        const currentScale = mapping.toScale(current);
        let desired: unknown;
        if (info.verb === 'update') desired = decodeObject(req.body, req.headers['content-type']);
        else desired = applyPatch(patchTypeOf(req.headers['content-type']), currentScale, decodeBody(req.body, req.headers['content-type']), { group: 'autoscaling', resource: 'scale' });
        const rv = ((desired as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion);
        precondition = rv && info.verb === 'update' ? rv : undefined;
        const replicas = desiredReplicas(desired, name);
        const next = mapping.withReplicas(structuredClone(current), replicas);
        if (precondition) next.metadata.resourceVersion = precondition; else delete next.metadata.resourceVersion;
        return next;
      };
      const { object } = await store.updateWith(rc, ns, name, compute, 'main', info.verb === 'update' && hasBodyResourceVersion(req));
      return send(object);
    },
  };
}

function hasBodyResourceVersion(req: FastifyRequest): boolean {
  try {
    const b = decodeBody(req.body, req.headers['content-type']) as { metadata?: { resourceVersion?: string } } | undefined;
    return !!b?.metadata?.resourceVersion;
  } catch {
    return false;
  }
}

/** pods/log: streamed from the pod's kubelet. */
export const podLogSubresource: Subresource = {
  ...knownSubresource('log'),
  serve: ({ deps, info, req, reply }) => proxyLogs(deps.registry, info, req, reply, deps.kubeletClient),
};

/** nodes/proxy: any path of the node's kubelet API (its /stats/summary, /metrics/resource, /pods, ...). */
export const nodeProxySubresource: Subresource = {
  ...knownSubresource('proxy'),
  serve: ({ deps, info, req, reply }) => proxyNode(deps.registry, info, req, reply, deps.kubeletClient),
};

/** pods/binding: the scheduler's decision (upstream BindingREST). */
export const podBindingSubresource: Subresource = {
  ...knownSubresource('binding'),
  serve: async ({ deps, store, info, rc, req, reply }) => {
    await bindPod(store, rc, info.namespace, info.name, decodeObject(req.body, req.headers['content-type']), new Date(deps.clock.now()));
    return reply.code(201).type(JSON_CONTENT_TYPE).send(successStatus());
  },
};

/** pods/eviction: a delete that respects PodDisruptionBudgets (upstream EvictionREST). */
export const podEvictionSubresource: Subresource = {
  ...knownSubresource('eviction'),
  serve: async ({ deps, store, info, rc, req, reply }) => {
    const pdbs = deps.registry.get(PodDisruptionBudgets);
    if (!pdbs) throw new ApiError('InternalError', 'poddisruptionbudgets are not served');
    await evictPod({ pods: store, pdbs, now: () => new Date(deps.clock.now()) }, rc, info.namespace, info.name, decodeObject(req.body, req.headers['content-type']));
    return reply.code(201).type(JSON_CONTENT_TYPE).send(successStatus());
  },
};

/** serviceaccounts/token: a TokenRequest signed by the server's issuer; 404 without one. */
export const serviceAccountTokenSubresource: Subresource = {
  ...knownSubresource('token'),
  serve: async ({ deps, info, rc, req, reply }) => {
    if (!deps.tokenRequest) throw notFoundError();
    return reply.code(201).type(JSON_CONTENT_TYPE).send(await createToken(deps.tokenRequest, info.namespace, info.name, decodeObject(req.body, req.headers['content-type']), rc.user));
  },
};

/** Discovery only: served as HTTP upgrades by kubelet-proxy (exec, attach, portforward). */
const upgradeOnly = (sub: string): Subresource => ({ ...knownSubresource(sub) });

/**
 * The subresources of a built-in resource, by the names its descriptor lists. A name without a
 * known implementation is listed in discovery and answers 404.
 */
export function builtinSubresources(r: ResourceDescriptor): Map<string, Subresource> {
  const core = r.group === '';
  const out = new Map<string, Subresource>();
  for (const sub of r.subresources) {
    let s: Subresource | undefined;
    if (sub === 'status') s = statusSubresource;
    else if (sub === 'scale') s = scaleSubresource(specReplicasScale({ setSelector: core && r.resource === 'replicationcontrollers' }));
    else if (core && r.resource === 'namespaces' && sub === 'finalize') s = finalizeSubresource;
    else if (core && r.resource === 'pods' && sub === 'log') s = podLogSubresource;
    else if (core && r.resource === 'pods' && sub === 'binding') s = podBindingSubresource;
    else if (core && r.resource === 'nodes' && sub === 'proxy') s = nodeProxySubresource;
    else if (core && r.resource === 'pods' && sub === 'eviction') s = podEvictionSubresource;
    else if (core && r.resource === 'serviceaccounts' && sub === 'token') s = serviceAccountTokenSubresource;
    else if (r.group === 'certificates.k8s.io' && r.resource === 'certificatesigningrequests' && sub === 'approval') s = approvalSubresource;
    out.set(sub, s ?? upgradeOnly(sub));
  }
  return out;
}
