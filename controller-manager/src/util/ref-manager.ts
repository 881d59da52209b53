/**
 * ControllerRefManager (upstream controller_ref_manager.go): adopt orphans that match the owner's
 * selector, release owned objects that no longer match, ignore objects another controller owns.
 */
import { isNotFound, type KubeObject, type ParsedLabelSelector, type ResourceDescriptor } from '@mk8s/api';
import { controllerOf, newControllerRef, type ResourceClient } from '@mk8s/client';

export interface ClaimOptions<T extends KubeObject> {
  owner: KubeObject;
  ownerResource: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>;
  selector: ParsedLabelSelector;
  candidates: readonly T[];
  /** Client for the candidates' resource in the owner's namespace. */
  client: ResourceClient<T>;
  /**
   * Re-reads the owner from the apiserver before the first adoption (RecheckDeletionTimestamp):
   * throws when it is gone, replaced (uid) or being deleted, so a stale cache never adopts.
   */
  recheckOwner: () => Promise<void>;
  signal?: AbortSignal;
}

/** Returns the candidates the owner controls after adopting and releasing. */
export async function claimObjects<T extends KubeObject>(o: ClaimOptions<T>): Promise<T[]> {
  const uid = o.owner.metadata.uid;
  const ownerDeleting = !!o.owner.metadata.deletionTimestamp;
  const claimed: T[] = [];
  let rechecked: Promise<void> | undefined;
  const errors: unknown[] = [];
  for (const obj of o.candidates) {
    const ref = controllerOf(obj);
    const matches = o.selector.matches(obj.metadata.labels);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matches) { claimed.push(obj); continue; }
      if (ownerDeleting) continue;
      try {
        await o.client.patch(obj.metadata.name, 'merge', {
          metadata: { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion, ownerReferences: (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid) },
        }, o.signal ? { signal: o.signal } : {});
      } catch (err) {
        if (!isNotFound(err)) errors.push(err);
      }
      continue;
    }
    if (ownerDeleting || !matches || obj.metadata.deletionTimestamp) continue;
    try {
      rechecked ??= o.recheckOwner();
      await rechecked;
    } catch (err) {
      errors.push(err);
      break;
    }
    try {
      const patched = await o.client.patch(obj.metadata.name, 'merge', {
        metadata: { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion, ownerReferences: [...(obj.metadata.ownerReferences ?? []), newControllerRef(o.owner, o.ownerResource)] },
      }, o.signal ? { signal: o.signal } : {});
      claimed.push(patched);
    } catch (err) {
      if (!isNotFound(err)) errors.push(err);
    }
  }
  if (errors.length) throw errors[0];
  return claimed;
}
