/**
 * ObjectTracker: the in-memory object store behind FakeClientset (client-go testing.ObjectTracker).
 * Assigns resourceVersions from one counter, keeps an event history so watches can resume from a
 * resourceVersion, and honours finalizers on delete. Kept deliberately small: no defaulting, no
 * validation; it is not a second apiserver.
 */
import { randomUUID } from 'node:crypto';
import { apiVersionOf, errors, qualifiedResource, type KubeObject, type ResourceDescriptor, type WatchEvent } from '@mk8s/api';
import { realClock, type Clock } from '@mk8s/component-base';
import { AsyncQueue } from '../async-queue.js';
import { objectMatcher } from '../selector-match.js';

/** Metadata as a writable bag: kubernetes-types marks server-set fields readonly. */
type MutMeta = { -readonly [K in keyof KubeObject['metadata']]?: KubeObject['metadata'][K] | undefined } & { name: string };
const m = (o: KubeObject): MutMeta => o.metadata as MutMeta;
const setMeta = (o: KubeObject, meta: MutMeta): void => { (o as { metadata: unknown }).metadata = meta; };

interface Stored { r: ResourceDescriptor; obj: KubeObject }
interface HistoryEntry { rk: string; rv: number; type: 'ADDED' | 'MODIFIED' | 'DELETED'; obj: KubeObject; prev?: KubeObject }
interface Watcher { rk: string; namespace: string; match: (o: unknown) => boolean; q: AsyncQueue<WatchEvent>; detach?: () => void }

const clone = <T>(o: T): T => structuredClone(o);
const time = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const GENERATE_SUFFIX = 'bcdfghjklmnpqrstvwxz2456789';

/** In-memory store of API objects keyed by resource and "ns/name". */
export class ObjectTracker {
  private rv = 0;
  private readonly objects = new Map<string, Map<string, Stored>>();
  private history: HistoryEntry[] = [];
  /** Watches from a resourceVersion below this answer 410 Expired. */
  private compactedRv = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly clock: Clock;
  /** @default 10_000 history entries kept for watch resume */
  private readonly historyLimit: number;

  /** Pods bound to a node get a deletion grace period, as on the apiserver. */
  private readonly gracefulDeletion: boolean;

  constructor(o: { clock?: Clock; historyLimit?: number; gracefulDeletion?: boolean } = {}) {
    this.clock = o.clock ?? realClock;
    this.gracefulDeletion = o.gracefulDeletion ?? false;
    this.historyLimit = o.historyLimit ?? 10_000;
  }

  /** The latest resourceVersion handed out. */
  currentResourceVersion(): string { return String(this.rv); }

  private bucket(r: ResourceDescriptor): Map<string, Stored> {
    const rk = qualifiedResource(r);
    let m = this.objects.get(rk);
    if (!m) { m = new Map(); this.objects.set(rk, m); }
    return m;
  }

  private keyOf(r: ResourceDescriptor, namespace: string | undefined, name: string): string {
    return r.namespaced ? `${namespace ?? ''}/${name}` : name;
  }

  get(r: ResourceDescriptor, namespace: string | undefined, name: string): KubeObject {
    const s = this.bucket(r).get(this.keyOf(r, namespace, name));
    if (!s) throw errors.notFound(qualifiedResource(r), name);
    return clone(s.obj);
  }

  list(r: ResourceDescriptor, namespace: string | undefined, o: { labelSelector?: string | undefined; fieldSelector?: string | undefined } = {}): { items: KubeObject[]; resourceVersion: string } {
    const match = objectMatcher(r, o);
    const items = [...this.bucket(r).entries()]
      .filter(([, s]) => !r.namespaced || !namespace || s.obj.metadata.namespace === namespace)
      .filter(([, s]) => match(s.obj))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, s]) => clone(s.obj));
    return { items, resourceVersion: this.currentResourceVersion() };
  }

  create(r: ResourceDescriptor, namespace: string | undefined, input: KubeObject): KubeObject {
    const obj = clone(input);
    obj.apiVersion = apiVersionOf(r);
    obj.kind = r.kind;
    setMeta(obj, { ...obj.metadata });
    if (r.namespaced) obj.metadata.namespace = namespace || obj.metadata.namespace || 'default';
    else delete obj.metadata.namespace;
    if (!obj.metadata.name && obj.metadata.generateName) {
      for (let i = 0; i < 100; i++) {
        let suffix = '';
        for (let j = 0; j < 5; j++) suffix += GENERATE_SUFFIX[Math.floor(Math.random() * GENERATE_SUFFIX.length)];
        const name = obj.metadata.generateName + suffix;
        if (!this.bucket(r).has(this.keyOf(r, obj.metadata.namespace, name))) { obj.metadata.name = name; break; }
      }
    }
    if (!obj.metadata.name) throw errors.invalid(r.kind, r.group, '', [{ field: 'metadata.name', reason: 'FieldValueRequired', message: 'metadata.name: Required value: name or generateName is required' }]);
    const key = this.keyOf(r, obj.metadata.namespace, obj.metadata.name);
    if (this.bucket(r).has(key)) throw errors.alreadyExists(qualifiedResource(r), obj.metadata.name);
    m(obj).uid ??= randomUUID();
    m(obj).creationTimestamp ??= new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    m(obj).generation ??= 1;
    obj.metadata.resourceVersion = String(++this.rv);
    this.bucket(r).set(key, { r, obj });
    this.emit(r, 'ADDED', obj);
    return clone(obj);
  }

  /**
   * Replaces an object. A set resourceVersion must match (else Conflict). keepStatus: the stored
   * status wins (a main-resource update); statusOnly: only status changes are kept.
   */
  update(r: ResourceDescriptor, namespace: string | undefined, input: KubeObject, o: { statusOnly?: boolean; allowCreate?: boolean } = {}): KubeObject {
    const name = input.metadata?.name ?? '';
    const key = this.keyOf(r, namespace ?? input.metadata.namespace, name);
    const cur = this.bucket(r).get(key);
    if (!cur) {
      if (o.allowCreate) return this.create(r, namespace, input);
      throw errors.notFound(qualifiedResource(r), name);
    }
    const rv = input.metadata.resourceVersion;
    if (rv && rv !== cur.obj.metadata.resourceVersion) throw errors.conflict(qualifiedResource(r), name);
    let next: KubeObject;
    if (o.statusOnly) {
      next = clone(cur.obj);
      if (input['status'] === undefined) delete next['status']; else next['status'] = clone(input['status']);
    } else {
      next = clone(input);
      next.apiVersion = apiVersionOf(r);
      next.kind = r.kind;
      setMeta(next, { ...next.metadata, uid: cur.obj.metadata.uid, name, creationTimestamp: cur.obj.metadata.creationTimestamp });
      if (r.namespaced) m(next).namespace = cur.obj.metadata.namespace; else delete m(next).namespace;
      if (cur.obj.metadata.deletionTimestamp) m(next).deletionTimestamp = cur.obj.metadata.deletionTimestamp;
      if (JSON.stringify(next['spec']) !== JSON.stringify(cur.obj['spec'])) m(next).generation = (cur.obj.metadata.generation ?? 0) + 1;
      else if (cur.obj.metadata.generation !== undefined) m(next).generation = cur.obj.metadata.generation;
    }
    return this.write(r, key, cur.obj, next);
  }

  private write(r: ResourceDescriptor, key: string, prev: KubeObject, next: KubeObject): KubeObject {
    // An object being deleted goes away once its last finalizer is removed.
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers?.length) && !next.metadata.deletionGracePeriodSeconds) {
      this.bucket(r).delete(key);
      next.metadata.resourceVersion = String(++this.rv);
      this.emit(r, 'DELETED', next, prev);
      return clone(next);
    }
    next.metadata.resourceVersion = String(++this.rv);
    this.bucket(r).set(key, { r, obj: next });
    this.emit(r, 'MODIFIED', next, prev);
    return clone(next);
  }

  /** Applies fn to a copy of the stored object and writes the result (for patches). */
  mutate(r: ResourceDescriptor, namespace: string | undefined, name: string, fn: (cur: KubeObject) => KubeObject, o: { specChange?: boolean } = {}): KubeObject {
    const key = this.keyOf(r, namespace, name);
    const cur = this.bucket(r).get(key);
    if (!cur) throw errors.notFound(qualifiedResource(r), name);
    const next = fn(clone(cur.obj));
    setMeta(next, { ...next.metadata, uid: cur.obj.metadata.uid, name: cur.obj.metadata.name });
    if (r.namespaced) m(next).namespace = cur.obj.metadata.namespace;
    if (o.specChange && cur.obj.metadata.generation !== undefined) {
      m(next).generation = JSON.stringify(next['spec']) !== JSON.stringify(cur.obj['spec']) ? cur.obj.metadata.generation + 1 : cur.obj.metadata.generation;
    }
    const rv = next.metadata.resourceVersion;
    if (rv && rv !== cur.obj.metadata.resourceVersion) throw errors.conflict(qualifiedResource(r), name);
    return this.write(r, key, cur.obj, next);
  }

  /** Deletes (or, with finalizers, marks deleting). Preconditions on uid/resourceVersion → Conflict. */
  delete(r: ResourceDescriptor, namespace: string | undefined, name: string, o: { preconditions?: { uid?: string; resourceVersion?: string }; gracePeriodSeconds?: number; propagationPolicy?: string } = {}): KubeObject {
    const key = this.keyOf(r, namespace, name);
    const cur = this.bucket(r).get(key);
    if (!cur) throw errors.notFound(qualifiedResource(r), name);
    const p = o.preconditions;
    if (p?.uid && p.uid !== cur.obj.metadata.uid) throw errors.conflict(qualifiedResource(r), name, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${cur.obj.metadata.uid}`);
    if (p?.resourceVersion && p.resourceVersion !== cur.obj.metadata.resourceVersion) throw errors.conflict(qualifiedResource(r), name, `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${cur.obj.metadata.resourceVersion}`);
    // As the apiserver's BeforeDelete: propagation policy finalizers, then graceful deletion
    // (only pods bound to a node and not finished get a grace period).
    let finalizers = [...(cur.obj.metadata.finalizers ?? [])];
    if (o.propagationPolicy === 'Foreground') finalizers = [...finalizers.filter((f) => f !== 'orphan'), ...(finalizers.includes('foregroundDeletion') ? [] : ['foregroundDeletion'])];
    else if (o.propagationPolicy === 'Orphan') finalizers = [...finalizers.filter((f) => f !== 'foregroundDeletion'), ...(finalizers.includes('orphan') ? [] : ['orphan'])];
    else if (o.propagationPolicy === 'Background') finalizers = finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion');
    const grace = Math.max(0, this.gracePeriodOf(r, cur.obj, o.gracePeriodSeconds));
    const meta = cur.obj.metadata;
    if (meta.deletionTimestamp) {
      const existing = meta.deletionGracePeriodSeconds ?? 0;
      if (grace === 0 && finalizers.length === 0) return this.remove(r, key, cur.obj);
      if (grace >= existing && JSON.stringify(finalizers) === JSON.stringify(meta.finalizers ?? [])) return clone(cur.obj);
      const next = clone(cur.obj);
      if (finalizers.length) m(next).finalizers = finalizers; else delete m(next).finalizers;
      if (grace < existing) { m(next).deletionGracePeriodSeconds = grace; m(next).deletionTimestamp = time(this.clock.now() + grace * 1000); }
      return this.write(r, key, cur.obj, next);
    }
    if (grace === 0 && finalizers.length === 0) return this.remove(r, key, cur.obj);
    const next = clone(cur.obj);
    if (finalizers.length) m(next).finalizers = finalizers; else delete m(next).finalizers;
    m(next).deletionTimestamp = time(this.clock.now() + grace * 1000);
    m(next).deletionGracePeriodSeconds = grace;
    return this.write(r, key, cur.obj, next);
  }

  private gracePeriodOf(r: ResourceDescriptor, obj: KubeObject, requested: number | undefined): number {
    if (!this.gracefulDeletion || r.group !== '' || r.resource !== 'pods') return 0;
    const spec = (obj['spec'] ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
    const phase = (obj['status'] as { phase?: string } | undefined)?.phase;
    if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    return requested ?? spec.terminationGracePeriodSeconds ?? 30;
  }

  private remove(r: ResourceDescriptor, key: string, cur: KubeObject): KubeObject {
    this.bucket(r).delete(key);
    const last = clone(cur);
    last.metadata.resourceVersion = String(++this.rv);
    this.emit(r, 'DELETED', last);
    return clone(last);
  }

  /**
   * Watches r. resourceVersion undefined/'0': ADDED for existing objects first; 'N': replays
   * history after N (410 Expired when N was compacted away).
   */
  watch(r: ResourceDescriptor, namespace: string | undefined, o: { resourceVersion?: string | undefined; labelSelector?: string | undefined; fieldSelector?: string | undefined; signal?: AbortSignal | undefined } = {}): AsyncQueue<WatchEvent> {
    const q = new AsyncQueue<WatchEvent>();
    const w: Watcher = { rk: qualifiedResource(r), namespace: r.namespaced ? namespace ?? '' : '', match: objectMatcher(r, o), q };
    const from = o.resourceVersion;
    if (!from || from === '0') {
      for (const obj of this.list(r, namespace, o).items) q.push({ type: 'ADDED', object: obj });
    } else {
      const n = Number(from);
      if (!Number.isFinite(n)) {
        q.fail(errors.badRequest(`invalid resource version "${from}"`));
        return q;
      }
      if (n < this.compactedRv) {
        q.fail(errors.expired(`too old resource version: ${from} (${this.compactedRv})`));
        return q;
      }
      for (const h of this.history) if (h.rv > n) this.deliver(w, h);
    }
    this.watchers.add(w);
    const stop = () => { this.watchers.delete(w); q.end(); };
    w.detach = () => o.signal?.removeEventListener('abort', stop);
    q.onReturn = () => { this.watchers.delete(w); w.detach?.(); };
    if (o.signal?.aborted) stop();
    else o.signal?.addEventListener('abort', stop, { once: true });
    return q;
  }

  /** Ends every open watch (as an apiserver restart or timeout would). */
  closeWatches(): void { for (const w of this.watchers) { w.q.end(); w.detach?.(); } this.watchers.clear(); }

  /** Ends every open watch with an error event (e.g. errors.expired(...)). */
  failWatches(err: unknown): void { for (const w of this.watchers) { w.q.fail(err); w.detach?.(); } this.watchers.clear(); }

  /** Forgets history up to the current revision: watches from older resourceVersions get 410. */
  compact(): void { this.history = []; this.compactedRv = this.rv; }

  private emit(r: ResourceDescriptor, type: HistoryEntry['type'], obj: KubeObject, prev?: KubeObject): void {
    const h: HistoryEntry = { rk: qualifiedResource(r), rv: this.rv, type, obj: clone(obj), ...(prev ? { prev: clone(prev) } : {}) };
    this.history.push(h);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRv = dropped[dropped.length - 1]!.rv;
    }
    for (const w of this.watchers) this.deliver(w, h);
  }

  private deliver(w: Watcher, h: HistoryEntry): void {
    if (h.rk !== w.rk) return;
    if (w.namespace && h.obj.metadata.namespace !== w.namespace) return;
    const now = w.match(h.obj);
    const before = h.prev ? w.match(h.prev) : now;
    // As the apiserver's watch cache does: a change across the selector boundary is an ADDED or DELETED.
    let type: WatchEvent['type'] = h.type;
    if (h.type === 'MODIFIED' && now && !before) type = 'ADDED';
    else if (h.type === 'MODIFIED' && !now && before) type = 'DELETED';
    else if (!now) return;
    w.q.push({ type, object: clone(h.obj) });
  }
}
