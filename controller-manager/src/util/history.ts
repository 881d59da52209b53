/**
 * ControllerRevision history shared by the DaemonSet and StatefulSet controllers (upstream
 * pkg/controller/history and the constructHistory/cleanupHistory halves of daemon/update.go and
 * statefulset/stateful_set_control.go). A revision's data is the strategic merge patch that puts
 * the owner's spec.template back (`{"spec":{"template":{…,"$patch":"replace"}}}`): exactly what
 * `kubectl rollout undo ds|sts` applies.
 */
import { ControllerRevisions, isAlreadyExists, isNotFound, labelSelectorFromObject, type ControllerRevision, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import { newControllerRef, type ResourceClient } from '@mk8s/client';
import { canonicalJson, safeEncodeString } from './hash.js';
import { clone, type Obj } from './meta.js';
import { claimObjects } from './ref-manager.js';

export type RevisionObj = Obj<ControllerRevision>;

/** The label carrying a revision's hash on the revision and on the pods made from it. */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** fnv.New32 (FNV-1: multiply, then xor), which upstream's HashControllerRevision uses. */
function fnv32(bytes: Uint8Array, h = FNV_OFFSET): number {
  for (const b of bytes) { h = Math.imul(h, FNV_PRIME) >>> 0; h = (h ^ b) >>> 0; }
  return h >>> 0;
}

/** HashControllerRevision: over the data (canonical JSON here, Go's raw bytes upstream) and the collision probe. */
export function hashControllerRevision(data: unknown, probe?: number): string {
  let h = fnv32(new TextEncoder().encode(canonicalJson(data)));
  if (probe !== undefined) h = fnv32(new TextEncoder().encode(String(probe)), h);
  return safeEncodeString(String(h));
}

/** ControllerRevisionName: `<prefix>-<hash>`, the prefix cut to 223 characters. */
export function controllerRevisionName(prefix: string, hash: string): string {
  return `${prefix.length > 223 ? prefix.slice(0, 223) : prefix}-${hash}`;
}

/** getPatch: the data of the owner's current revision. */
export function templatePatch(owner: { spec?: { template?: unknown } }): { spec: { template: Record<string, unknown> } } {
  return { spec: { template: { ...(clone(owner.spec?.template ?? {}) as Record<string, unknown>), $patch: 'replace' } } };
}

/** NewControllerRevision: labelled with the template's labels and its hash, controlled by parent. */
export function newControllerRevision(parent: KubeObject, parentKind: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>,
  templateLabels: Record<string, string> | undefined, data: unknown, revision: number, collisionCount?: number): RevisionObj {
  const hash = hashControllerRevision(data, collisionCount);
  return {
    apiVersion: 'apps/v1', kind: 'ControllerRevision',
    metadata: {
      name: controllerRevisionName(parent.metadata.name, hash), namespace: parent.metadata.namespace ?? 'default',
      labels: { ...(templateLabels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ownerReferences: [newControllerRef(parent, parentKind)],
    },
    data: data as ControllerRevision['data'], revision,
  } as RevisionObj;
}

/** EqualRevision: same hash label and same data. */
export function equalRevision(a: RevisionObj, b: RevisionObj): boolean {
  const ha = a.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL], hb = b.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
  if (ha === undefined || ha !== hb) return false;
  return canonicalJson(a.data) === canonicalJson(b.data);
}

/** SortControllerRevisions: by revision, then creation time, then name. */
export function sortRevisions(revs: readonly RevisionObj[]): RevisionObj[] {
  return [...revs].sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0)
    || String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? ''))
    || a.metadata.name.localeCompare(b.metadata.name));
}

/** nextRevision: one more than the highest revision (1 for none). */
export function nextRevision(revs: readonly RevisionObj[]): number {
  return revs.reduce((m, r) => Math.max(m, r.revision ?? 0), 0) + 1;
}

/**
 * The old revisions to delete so that at most limit remain, oldest first, never one in live
 * (names of the current/update revisions and of revisions pods still run). Pure.
 */
export function revisionsToTruncate(old: readonly RevisionObj[], live: ReadonlySet<string>, limit: number): RevisionObj[] {
  const candidates = sortRevisions(old).filter((r) => !live.has(r.metadata.name));
  const excess = candidates.length - Math.max(0, limit);
  return excess > 0 ? candidates.slice(0, excess) : [];
}

export interface OwnerHistory {
  /** The revision of the owner's current template (created or bumped as needed). */
  update: RevisionObj;
  /** Every other revision the owner controls, sorted. */
  old: RevisionObj[];
  /** The collisionCount to write to the owner's status. */
  collisionCount: number;
}

/**
 * History of one owner: claims the ControllerRevisions matching its selector (adopting orphans,
 * releasing the ones that stop matching), then makes sure one equals the current template,
 * creating it (with a collision probe on a name clash) or moving it to the newest revision
 * number, and removes duplicates of it (upstream's dedupCurRevisions).
 */
export class RevisionHistory {
  constructor(private readonly o: { client: (namespace: string) => ResourceClient<RevisionObj>; ownerKind: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'> }) {}

  /** The revisions owner controls, from candidates (the lister's, same namespace). */
  async claim(owner: KubeObject & { spec?: { selector?: unknown } }, candidates: readonly RevisionObj[], recheckOwner: () => Promise<void>, signal?: AbortSignal): Promise<RevisionObj[]> {
    const selector = labelSelectorFromObject(owner.spec?.selector as never);
    return claimObjects({ owner, ownerResource: this.o.ownerKind, selector, candidates, client: this.o.client(owner.metadata.namespace ?? 'default'), recheckOwner, ...(signal ? { signal } : {}) });
  }

  async construct(owner: KubeObject & { spec?: { template?: { metadata?: { labels?: Record<string, string> } } }; status?: { collisionCount?: number } },
    owned: readonly RevisionObj[], signal?: AbortSignal): Promise<OwnerHistory> {
    const client = this.o.client(owner.metadata.namespace ?? 'default');
    let collisionCount = owner.status?.collisionCount ?? 0;
    const revs = sortRevisions(owned);
    const next = nextRevision(revs);
    const want = newControllerRevision(owner, this.o.ownerKind, owner.spec?.template?.metadata?.labels, templatePatch(owner), next, collisionCount);
    const equal = revs.filter((r) => canonicalJson(r.data) === canonicalJson(want.data));
    let update: RevisionObj;
    if (equal.length > 0) {
      // The newest equal one stays; others are duplicates (their pods get relabelled by the controller's sync).
      update = equal[equal.length - 1]!;
      if ((update.revision ?? 0) < next - 1) {
        update = await client.update({ ...clone(update), revision: next } as RevisionObj, signal ? { signal } : {});
      }
      for (const dup of equal.slice(0, -1)) {
        try { await client.delete(dup.metadata.name, signal ? { signal } : {}); } catch (err) { if (!isNotFound(err)) throw err; }
      }
    } else {
      ({ revision: update, collisionCount } = await this.create(client, owner, want, collisionCount, signal));
    }
    const old = revs.filter((r) => r.metadata.name !== update.metadata.name && !equal.includes(r));
    return { update, old, collisionCount };
  }

  /** CreateControllerRevision: on AlreadyExists with other data, bump collisionCount and rehash. */
  private async create(client: ResourceClient<RevisionObj>, owner: KubeObject, want: RevisionObj, collisionCount: number, signal?: AbortSignal): Promise<{ revision: RevisionObj; collisionCount: number }> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const hash = hashControllerRevision(want.data, collisionCount);
      const candidate = clone(want);
      candidate.metadata.name = controllerRevisionName(owner.metadata.name, hash);
      candidate.metadata.labels = { ...(candidate.metadata.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash };
      try {
        return { revision: await client.create(candidate, signal ? { signal } : {}), collisionCount };
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const existing = await client.get(candidate.metadata.name, signal ? { signal } : {});
        if (equalRevision(existing, candidate) && existing.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid)) return { revision: existing, collisionCount };
        collisionCount++;
      }
    }
    throw new Error(`could not find a free name for a ControllerRevision of ${owner.metadata.name}`);
  }

  /** cleanupHistory: deletes old revisions beyond limit that nothing live uses. */
  async truncate(namespace: string, old: readonly RevisionObj[], live: ReadonlySet<string>, limit: number, signal?: AbortSignal): Promise<void> {
    const client = this.o.client(namespace);
    for (const r of revisionsToTruncate(old, live, limit)) {
      try { await client.delete(r.metadata.name, signal ? { signal } : {}); } catch (err) { if (!isNotFound(err)) throw err; }
    }
  }
}

export { ControllerRevisions };
