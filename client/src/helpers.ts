/** Small helpers every component uses: keys, owner references, waiting in tests. */
import type { KubeObject, OwnerReference, ResourceDescriptor } from '@mk8s/api';
import { apiVersionOf } from '@mk8s/api';
import type { ObjectKey } from './interfaces.js';

/** Recursively readonly: what informer caches hand out. Never mutate a cached object; structuredClone it first. */
export type DeepReadonly<T> =
  T extends (...args: never[]) => unknown ? T
    : T extends readonly (infer E)[] ? readonly DeepReadonly<E>[]
      : T extends object ? { readonly [P in keyof T]: DeepReadonly<T[P]> }
        : T;

interface HasMeta { metadata?: { name?: string; namespace?: string; uid?: string; ownerReferences?: readonly OwnerReference[] } }

/** "namespace/name", or "name" for cluster-scoped objects (client-go MetaNamespaceKeyFunc). */
export function objectKey(obj: { readonly metadata?: { readonly name?: string; readonly namespace?: string } }): ObjectKey {
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** Splits "ns/name" → {namespace, name}; "name" → {namespace: '', name}. */
export function splitKey(key: ObjectKey): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** The ownerReference with controller: true, if any (metav1.GetControllerOf). */
export function controllerOf(obj: DeepReadonly<HasMeta> | HasMeta): DeepReadonly<OwnerReference> | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** True when owner (by uid) is obj's controller (metav1.IsControlledBy). */
export function isControlledBy(obj: DeepReadonly<HasMeta> | HasMeta, owner: { readonly metadata?: { readonly uid?: string } }): boolean {
  const ref = controllerOf(obj);
  return !!ref && !!owner.metadata?.uid && ref.uid === owner.metadata.uid;
}

/** A controller ownerReference to owner (metav1.NewControllerRef): controller and blockOwnerDeletion true. */
export function newControllerRef(owner: { readonly metadata: { readonly name: string; readonly uid?: string } }, descriptor: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>): OwnerReference {
  return {
    apiVersion: apiVersionOf(descriptor),
    kind: descriptor.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * Polls cond until it returns a truthy value (resolved with it) or timeoutMs passes (rejects).
 * For tests and CLIs; uses real timers. Errors thrown by cond count as "not yet".
 */
export async function waitFor<T>(cond: () => T | Promise<T>, o: { timeoutMs?: number; intervalMs?: number; message?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (o.timeoutMs ?? 10_000);
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v as NonNullable<T>;
    } catch (err) { lastErr = err; }
    if (Date.now() >= deadline) {
      throw new Error(`waitFor: ${o.message ?? 'condition'} not met within ${o.timeoutMs ?? 10_000}ms`, lastErr ? { cause: lastErr } : undefined);
    }
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 50));
  }
}

/** Metadata key of a KubeObject-ish value (defensive for decoded JSON). */
export function metaOf(obj: unknown): KubeObject['metadata'] | undefined {
  return (obj as KubeObject | undefined)?.metadata;
}

const DECIMAL = /^(0|[1-9]\d*)$/;

/**
 * Whether a cached copy (resourceVersion `cached`) has caught up with a write this component made
 * (the server answered `written`). resourceVersions are opaque to clients; the one ordering a
 * client may rely on is upstream's own in its assume caches (scheduler assumecache,
 * PV controller storeObjectUpdate): both parse them as etcd revisions (int64) and compare. So do
 * this, exactly (BigInt, no float rounding), and only when both are decimal integers; any other
 * resourceVersion is only compared for equality. A missing cached object has not caught up.
 */
export function resourceVersionCaughtUp(cached: string | undefined, written: string): boolean {
  if (cached === undefined) return false;
  if (cached === written) return true;
  if (!DECIMAL.test(cached) || !DECIMAL.test(written)) return false;
  return BigInt(cached) >= BigInt(written);
}
