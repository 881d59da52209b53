/**
 * Store: the one set of generic REST semantics every resource shares (upstream
 * registry/generic/registry.Store). A resource plugs in a RestStrategy; the Store turns requests
 * into Storage calls with uid/creationTimestamp/generation handling, compare-and-swap updates,
 * graceful and finalizer-aware deletion, admission and validation.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  ApiError, apiVersionOf, errors, invalidError, qualifiedResource, registryPrefix,
  type DeleteOptions, type FieldError, type KubeList, type KubeObject, type ResourceDescriptor, type WatchEvent,
} from '@mk8s/api';
import type { Clock } from '@mk8s/component-base';
import type { Storage, StorageListOptions, StorageWatchOptions } from '../../storage/interfaces.js';
import type { UserInfo } from '../../auth/authentication.js';
import { runMutatingAdmission, runValidatingAdmission, type AdmissionOperation, type AdmissionPlugin } from '../../admission/interfaces.js';
import { defaultShouldDeleteDuringUpdate, metaOf, type RestStrategy, type StrategyContext, type UpdateTarget } from './strategy.js';
import { formatTime, generateName } from './names.js';
import { managedFieldsForCreate, recordUpdate } from './apply.js';
import { rememberedJson } from '../../storage/encoded-json.js';

// Objects and events from the watch cache are shared and deep-frozen, so their typed form and its
// JSON can be computed once for every list and watcher that sends them (upstream's cachingObject).
const typedOf = new WeakMap<KubeObject, KubeObject>();               // frozen source → typed object
const jsonOf = new WeakMap<KubeObject, Buffer>();                   // typed object (of a frozen source) → UTF-8 JSON
const typedEvents = new WeakMap<object, WatchEvent>();              // frozen storage event → wire event
const jsonTextOf = new WeakMap<KubeObject, string>();               // typed object → the JSON its storage wrote (a create)

/**
 * UTF-8 JSON of an object the Store returned: memoized for objects that came from the watch cache
 * (treat such results as read-only until sent), so lists and watch events copy bytes instead of
 * serializing (and re-encoding) every object per request. Plain JSON otherwise.
 */
export function encodeObject(obj: KubeObject): Buffer {
  let b = jsonOf.get(obj);
  if (b === undefined) {
    b = Buffer.from(jsonTextOf.get(obj) ?? JSON.stringify(obj));
    if (Object.isFrozen(obj)) jsonOf.set(obj, b);
  }
  return b;
}

/**
 * The JSON of one object for a response of its own: the text the storage wrote when there is one
 * (a create; node:http writes a text body together with the headers, no Buffer made for it), else
 * encodeObject's bytes.
 */
export function encodeObjectText(obj: KubeObject): string | Buffer {
  return jsonTextOf.get(obj) ?? encodeObject(obj);
}

/** Per-request facts the Store needs. */
export interface RequestContext {
  user: UserInfo;
  /** dryRun=All: run everything but the write. */
  dryRun: boolean;
  fieldManager?: string;
  /** Warning headers to send (299 warnings). */
  warnings: string[];
}

export interface StoreOptions {
  strategy: RestStrategy;
  storage: Storage;
  clock: Clock;
  admission: readonly AdmissionPlugin[];
  /** Returns obj with defaults filled in (@mk8s/api applyDefaults). */
  defaulter?: (resource: ResourceDescriptor, obj: KubeObject) => KubeObject;
  /**
   * The same defaults, filled into obj itself (@mk8s/api applyDefaultsInPlace): used where the
   * Store owns obj (create), saving a deep copy per write. @default defaulter
   */
  defaulterInPlace?: (resource: ResourceDescriptor, obj: KubeObject) => KubeObject;
  /** Whole-object validation (@mk8s/api validateObject); runs after the strategy's own checks. */
  validator?: (resource: ResourceDescriptor, obj: KubeObject, old?: KubeObject) => FieldError[];
  /**
   * Objects are stored under another version of the same resource (a CustomResourceDefinition's
   * storage version): every object this Store returns says this Store's apiVersion (conversion
   * `None`). @default false
   */
  servesOtherVersion?: boolean;
}

export interface ListParams {
  predicate?: (obj: KubeObject) => boolean;
  /** '0': any recent state will do (served from the watch cache); unset: most recent. */
  resourceVersion?: string;
  limit?: number;
  continue?: string;
}

export interface WatchParams {
  predicate?: (obj: KubeObject) => boolean;
  resourceVersion?: string;
  signal: AbortSignal;
  onProgress?: (resourceVersion: string) => void;
}

/** Result of delete: the object as it now stands and whether it is gone. */
export interface DeleteResult { object: KubeObject; deleted: boolean }

const GENERATE_NAME_ATTEMPTS = 8;

function dropKeys(o: Record<string, unknown>, ...keys: string[]): void {
  for (const k of keys) if (k in o) delete o[k];
}

export class Store {
  readonly strategy: RestStrategy;
  readonly resource: ResourceDescriptor;
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly admission: readonly AdmissionPlugin[];
  private readonly defaulter: StoreOptions['defaulter'];
  private readonly defaulterInPlace: StoreOptions['defaulter'];
  private readonly validator: StoreOptions['validator'];
  private readonly qualified: string;
  private readonly servesOtherVersion: boolean;
  // Per-Store typed forms when objects are rewritten to this Store's version (not shareable with
  // the Store of the stored version, which watches the same cache).
  private readonly ownTyped = new WeakMap<KubeObject, KubeObject>();
  private readonly ownEvents = new WeakMap<object, WatchEvent>();

  constructor(o: StoreOptions) {
    this.strategy = o.strategy;
    this.resource = o.strategy.resource;
    this.storage = o.storage;
    this.clock = o.clock;
    this.admission = o.admission;
    this.defaulter = o.defaulter;
    this.defaulterInPlace = o.defaulterInPlace ?? o.defaulter;
    this.validator = o.validator;
    this.qualified = qualifiedResource(this.resource);
    this.servesOtherVersion = o.servesOtherVersion ?? false;
  }

  get hasStatusSubresource(): boolean {
    return this.strategy.statusSubresource ?? this.resource.subresources.includes('status');
  }

  /** etcd key of one object. */
  key(namespace: string, name: string): string {
    return this.resource.namespaced ? `${registryPrefix(this.resource)}${namespace}/${name}` : `${registryPrefix(this.resource)}${name}`;
  }

  /** etcd prefix of a collection ('' namespace: all namespaces). */
  prefix(namespace: string): string {
    return this.resource.namespaced && namespace ? `${registryPrefix(this.resource)}${namespace}/` : registryPrefix(this.resource);
  }

  /** Sets kind and apiVersion (the wire needs them on every object). */
  typed(obj: KubeObject): KubeObject {
    if (this.servesOtherVersion) return this.typedAsThisVersion(obj);
    if (!Object.isFrozen(obj)) return { apiVersion: apiVersionOf(this.resource), kind: this.resource.kind, ...obj };
    // Shared (cache) object: one frozen typed form for everyone; callers copy before changing.
    let t = typedOf.get(obj);
    if (!t) {
      t = Object.freeze({ apiVersion: apiVersionOf(this.resource), kind: this.resource.kind, ...obj });
      typedOf.set(obj, t);
    }
    return t;
  }

  private typedAsThisVersion(obj: KubeObject): KubeObject {
    const apiVersion = apiVersionOf(this.resource);
    const make = () => { const t = { apiVersion, kind: this.resource.kind, ...obj }; t.apiVersion = apiVersion; return t; };
    if (!Object.isFrozen(obj)) return make();
    let t = this.ownTyped.get(obj);
    if (!t) { t = Object.freeze(make()); this.ownTyped.set(obj, t); }
    return t;
  }

  /**
   * typed(), carrying over the JSON the storage kept for a fresh write (encodeObject then reuses
   * it): the typed form serializes the same when apiVersion and kind already lead the object.
   */
  private typedWithJson(obj: KubeObject): KubeObject {
    const t = this.typed(obj);
    const json = rememberedJson(obj);
    if (json === undefined || t === obj || this.servesOtherVersion) return t;
    let i = 0;
    for (const k in obj) {
      if ((i === 0 && k !== 'apiVersion') || (i === 1 && k !== 'kind')) return t;
      if (++i === 2) break;
    }
    if (i === 2) jsonTextOf.set(t, json);
    return t;
  }

  private ctxOf(rc: RequestContext): StrategyContext {
    return { now: new Date(this.clock.now()), user: rc.user };
  }

  // ---- reads ----

  /** One object; resourceVersion '0' accepts any recent state (the watch cache's), as upstream. */
  async get(namespace: string, name: string, opts: { resourceVersion?: string } = {}): Promise<KubeObject> {
    try {
      const key = this.key(namespace, name);
      return this.typed(await (opts.resourceVersion === '0' ? this.storage.get(key, { resourceVersion: '0' }) : this.storage.get(key)));
    } catch (err) {
      throw this.rewrite(err, name);
    }
  }

  async list(namespace: string, p: ListParams = {}): Promise<KubeList> {
    const opts: StorageListOptions = {};
    if (p.resourceVersion !== undefined) opts.resourceVersion = p.resourceVersion;
    if (p.limit) opts.limit = p.limit;
    if (p.continue) opts.continue = p.continue;
    if (p.predicate) opts.predicate = p.predicate;
    const res = await this.storage.list(this.prefix(namespace), opts);
    const metadata: KubeList['metadata'] = { resourceVersion: res.resourceVersion };
    if (res.continue) metadata.continue = res.continue;
    if (res.remainingItemCount !== undefined && res.continue) metadata.remainingItemCount = res.remainingItemCount;
    return { kind: this.resource.listKind, apiVersion: apiVersionOf(this.resource), metadata, items: res.items.map((o) => this.typed(o)) };
  }

  /**
   * Watches the collection. With a predicate, the storage turns MODIFIED events into
   * ADDED/DELETED when an object enters/leaves the selection (upstream's cacheWatcher).
   */
  async *watch(namespace: string, p: WatchParams): AsyncIterable<WatchEvent> {
    const opts: StorageWatchOptions = { signal: p.signal };
    if (p.resourceVersion !== undefined && p.resourceVersion !== '') opts.resourceVersion = p.resourceVersion;
    if (p.onProgress) opts.onProgress = p.onProgress;
    if (p.predicate) opts.predicate = p.predicate;
    for await (const ev of this.storage.watch(this.prefix(namespace), opts)) {
      if (!Object.isFrozen(ev)) { yield { type: ev.type, object: this.typed(ev.object) }; continue; }
      // The cache hands the same event to every watcher: so does this, and the encoding is shared.
      const events = this.servesOtherVersion ? this.ownEvents : typedEvents;
      let out = events.get(ev);
      if (!out) { out = Object.freeze({ type: ev.type, object: this.typed(ev.object) }); events.set(ev, out); }
      yield out;
    }
  }

  // ---- create ----

  /**
   * Creates obj in namespace (pipeline: defaults → mutating admission → prepareForCreate →
   * validation → validating admission → storage). generateName retries on a name clash.
   * body is not changed unless opts.bodyOwned says the caller hands it over (a request body
   * decoded for this call alone): then it is used as is instead of a deep copy.
   */
  async create(rc: RequestContext, namespace: string, body: KubeObject, opts: { bodyOwned?: boolean } = {}): Promise<KubeObject> {
    const ctx = this.ctxOf(rc);
    let obj = this.checkIdentity(opts.bodyOwned ? body : structuredClone(body), namespace);
    if (obj.metadata.resourceVersion) throw new ApiError('BadRequest', 'resourceVersion should not be set on objects to be created');
    if (this.defaulterInPlace) obj = this.defaulterInPlace(this.resource, obj);   // obj is this call's own copy
    this.trackCreate(rc, obj);
    await runMutatingAdmission(this.admission, this.attrs('CREATE', rc, obj, undefined, ''));
    const m = metaOf(obj);
    const generated = !m.name && !!m.generateName;
    for (let attempt = 0; ; attempt++) {
      if (generated) m.name = generateName(m.generateName!);
      m.uid = randomUUID();
      m.creationTimestamp = formatTime(ctx.now.getTime());
      // Only delete what is there: a delete turns the object into a slow dictionary-mode one.
      dropKeys(m, 'deletionTimestamp', 'deletionGracePeriodSeconds', 'resourceVersion', 'selfLink');
      if (this.tracksGeneration(obj)) m.generation = 1; else dropKeys(m, 'generation');
      if (this.resource.namespaced) m.namespace = namespace; else dropKeys(m, 'namespace');
      this.strategy.prepareForCreate?.(obj, ctx);
      this.validateOrThrow(obj, undefined);
      await runValidatingAdmission(this.admission, this.attrs('CREATE', rc, obj, undefined, ''));
      if (rc.dryRun) return this.typed(obj);
      const undo = await this.strategy.allocate?.(obj, undefined);
      try {
        return this.typedWithJson(await this.storage.create(this.key(namespace, m.name!), obj));
      } catch (err) {
        await undo?.();
        if (generated && err instanceof ApiError && err.reason === 'AlreadyExists' && attempt < GENERATE_NAME_ATTEMPTS) continue;
        throw this.rewrite(err, m.name!);
      }
    }
  }

  /**
   * A create records its manager as the owner of every field it sets (upstream tracks every
   * create), before mutating admission, whose changes nobody owns. A body that brings its own
   * managedFields (server-side apply's create) keeps them.
   */
  private trackCreate(rc: RequestContext, obj: KubeObject): void {
    const m = metaOf(obj);
    if (m.managedFields?.length) return;
    const entries = managedFieldsForCreate(obj, rc.fieldManager ?? 'unknown', apiVersionOf(this.resource), formatTime(this.clock.now()));
    if (entries.length > 0) m.managedFields = entries as NonNullable<typeof m.managedFields>; else delete m.managedFields;
  }

  // ---- update ----

  /**
   * Replaces the object (PUT). body.metadata.resourceVersion, when set, is a compare-and-swap
   * precondition. A missing object is created if the strategy allows create-on-update.
   */
  async update(rc: RequestContext, namespace: string, name: string, body: KubeObject, target: UpdateTarget = 'main'): Promise<{ object: KubeObject; created: boolean }> {
    const candidate = this.checkIdentity(structuredClone(body), namespace);
    if (candidate.metadata.name !== name) {
      throw new ApiError('BadRequest', `the name of the object (${candidate.metadata.name}) does not match the name on the URL (${name})`);
    }
    return this.updateWith(rc, namespace, name, () => structuredClone(candidate), target, candidate.metadata.resourceVersion !== undefined && candidate.metadata.resourceVersion !== '');
  }

  /**
   * The shared read-modify-write of PUT and PATCH: computeNext builds the desired object from the
   * current one (re-run on a concurrent write); the Store then restores system fields, applies
   * the strategy, validates and writes with compare-and-swap.
   */
  async updateWith(rc: RequestContext, namespace: string, name: string,
    computeNext: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>, target: UpdateTarget,
    hasResourceVersion: boolean): Promise<{ object: KubeObject; created: boolean }> {
    const key = this.key(namespace, name);
    let created = false;
    let previous: KubeObject | undefined;
    let undo: (() => Promise<void>) | undefined;
    const allocate = async (next: KubeObject, prev: KubeObject | undefined) => {
      // A retried attempt first gives back what the superseded one reserved.
      await undo?.();
      undo = rc.dryRun ? undefined : await this.strategy.allocate?.(next, prev);
      return next;
    };
    const tryUpdate = async (current: KubeObject | undefined): Promise<KubeObject> => {
      if (!current) {
        if (!this.strategy.allowCreateOnUpdate || target !== 'main') throw errors.notFound(this.qualified, name);
        const next = await computeNext(undefined);
        created = true;
        previous = undefined;
        return allocate(await this.prepareCreateOnUpdate(rc, namespace, next), undefined);
      }
      created = false;
      previous = this.typed(current);
      const next = await computeNext(previous);
      return allocate(await this.prepareUpdate(rc, previous, next, target, hasResourceVersion), previous);
    };
    if (rc.dryRun) {
      let current: KubeObject | undefined;
      try { current = await this.storage.get(key); } catch (err) { if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err; }
      const next = await tryUpdate(current);
      if (current?.metadata.resourceVersion) next.metadata.resourceVersion = current.metadata.resourceVersion;
      return { object: this.typed(next), created };
    }
    let written: KubeObject;
    try {
      written = await this.storage.guaranteedUpdate(key, tryUpdate, { ignoreNotFound: !!this.strategy.allowCreateOnUpdate && target === 'main' });
    } catch (err) {
      await undo?.();
      throw this.rewrite(err, name);
    }
    if (previous && this.strategy.release) await this.strategy.release(previous, written);
    if (!created && (this.strategy.shouldDeleteDuringUpdate ?? defaultShouldDeleteDuringUpdate)(written)) {
      try {
        const gone = await this.storage.delete(key, { preconditions: { uid: written.metadata.uid!, resourceVersion: written.metadata.resourceVersion! } });
        await this.strategy.release?.(gone, undefined);
        return { object: this.typed(gone), created: false };
      } catch (err) {
        if (!(err instanceof ApiError && (err.reason === 'NotFound' || err.reason === 'Conflict'))) throw this.rewrite(err, name);
      }
    }
    return { object: this.typed(written), created };
  }

  private async prepareCreateOnUpdate(rc: RequestContext, namespace: string, candidate: KubeObject): Promise<KubeObject> {
    const ctx = this.ctxOf(rc);
    const obj = this.defaulter ? this.defaulter(this.resource, candidate) : candidate;
    this.trackCreate(rc, obj);
    await runMutatingAdmission(this.admission, this.attrs('CREATE', rc, obj, undefined, ''));
    const m = metaOf(obj);
    m.uid = randomUUID();
    m.creationTimestamp = formatTime(ctx.now.getTime());
    delete m.resourceVersion;
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    if (this.tracksGeneration(obj)) m.generation = 1;
    if (this.resource.namespaced) m.namespace = namespace;
    this.strategy.prepareForCreate?.(obj, ctx);
    this.validateOrThrow(obj, undefined);
    await runValidatingAdmission(this.admission, this.attrs('CREATE', rc, obj, undefined, ''));
    return obj;
  }

  private async prepareUpdate(rc: RequestContext, current: KubeObject, candidate: KubeObject, target: UpdateTarget, hasResourceVersion: boolean): Promise<KubeObject> {
    const ctx = this.ctxOf(rc);
    const cm = current.metadata;
    const rv = candidate.metadata.resourceVersion;
    if (hasResourceVersion && rv !== cm.resourceVersion) throw errors.conflict(this.qualified, cm.name);
    if (!rv && this.strategy.allowUnconditionalUpdate === false) {
      throw invalidError(this.resource, cm.name, [{ type: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update' }]);
    }
    if (candidate.metadata.uid && candidate.metadata.uid !== cm.uid) {
      throw new ApiError('Conflict', `Precondition failed: UID in precondition: ${candidate.metadata.uid}, UID in object meta: ${cm.uid}`,
        { details: { name: cm.name, kind: this.resource.resource, ...(this.resource.group ? { group: this.resource.group } : {}) } });
    }
    let next: KubeObject;
    if ((target === 'status' || target === 'approval') && this.hasStatusSubresource) {
      // Status writes change status only (upstream ResetObjectMetaForStatus + strategy).
      next = structuredClone(current);
      if (candidate['status'] === undefined) delete next['status']; else next['status'] = structuredClone(candidate['status']);
      if (target === 'approval') this.strategy.prepareForApprovalUpdate?.(next, current, ctx);
      else this.strategy.prepareForStatusUpdate?.(next, current, ctx);
      if (cm.managedFields?.length) {
        const owners = recordUpdate(current, next, rc.fieldManager ?? 'unknown', apiVersionOf(this.resource), formatTime(this.clock.now()), target);
        if (owners) metaOf(next).managedFields = owners as NonNullable<KubeObject['metadata']['managedFields']>;
      }
    } else if (target === 'finalize') {
      next = structuredClone(current);
      const spec = (candidate['spec'] ?? {}) as Record<string, unknown>;
      next['spec'] = { ...((current['spec'] ?? {}) as Record<string, unknown>), finalizers: spec['finalizers'] ?? [] };
    } else {
      next = this.defaulter ? this.defaulter(this.resource, candidate) : candidate;
      next.apiVersion = apiVersionOf(this.resource); next.kind = this.resource.kind;
      if (this.hasStatusSubresource) {
        if (current['status'] === undefined) delete next['status']; else next['status'] = structuredClone(current['status']);
      }
      const nm = metaOf(next);
      // System fields are the server's: restore them from the stored object.
      nm.name = cm.name;
      if (cm.namespace !== undefined) nm.namespace = cm.namespace; else delete nm.namespace;
      if (cm.uid !== undefined) nm.uid = cm.uid;
      if (cm.creationTimestamp !== undefined) nm.creationTimestamp = cm.creationTimestamp;
      if (cm.deletionTimestamp) nm.deletionTimestamp = cm.deletionTimestamp; else delete nm.deletionTimestamp;
      if (cm.deletionGracePeriodSeconds !== undefined) nm.deletionGracePeriodSeconds = cm.deletionGracePeriodSeconds; else delete nm.deletionGracePeriodSeconds;
      if (cm.generation !== undefined) nm.generation = cm.generation; else delete nm.generation;
      // An update that leaves managedFields out keeps them (upstream: nil managedFields = unchanged).
      if (nm.managedFields === undefined && cm.managedFields !== undefined) nm.managedFields = structuredClone(cm.managedFields);
      delete nm['selfLink'];
      if (cm.deletionTimestamp) {
        const added = (nm.finalizers ?? []).filter((f) => !(cm.finalizers ?? []).includes(f));
        if (added.length > 0) {
          throw invalidError(this.resource, cm.name, [{ type: 'FieldValueForbidden', field: 'metadata.finalizers',
            message: `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}` }]);
        }
      }
      await runMutatingAdmission(this.admission, this.attrs('UPDATE', rc, next, current, ''));
      this.strategy.prepareForUpdate?.(next, current, ctx);
      // Under server-side apply (managedFields present, not rewritten by the caller as apply does),
      // this write's manager takes the fields it changed, so a later apply conflicts with it.
      if (cm.managedFields?.length && isDeepStrictEqual(nm.managedFields, cm.managedFields)) {
        const owners = recordUpdate(current, next, rc.fieldManager ?? 'unknown', apiVersionOf(this.resource), formatTime(this.clock.now()));
        if (owners) nm.managedFields = owners as NonNullable<typeof nm.managedFields>;
      }
    }
    next.metadata.resourceVersion = cm.resourceVersion!;
    if (this.tracksGeneration(next) && !isDeepStrictEqual(next['spec'], current['spec'])) {
      metaOf(next).generation = (cm.generation ?? 0) + 1;
    }
    this.validateOrThrow(next, current, target);
    await runValidatingAdmission(this.admission, this.attrs('UPDATE', rc, next, current, target === 'main' ? '' : target));
    delete next.metadata.resourceVersion;
    return next;
  }

  // ---- delete ----

  /**
   * Deletes one object. Objects with finalizers, or whose strategy asks for a grace period, are
   * only marked (deletionTimestamp); they go away when the last finalizer is removed or a later
   * delete with grace 0 comes. propagationPolicy Foreground/Orphan adds the GC's finalizers.
   */
  async delete(rc: RequestContext, namespace: string, name: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    const key = this.key(namespace, name);
    for (let attempt = 0; ; attempt++) {
      const current = await this.get(namespace, name);
      const cm = current.metadata;
      const pre = options.preconditions;
      if (pre?.uid && pre.uid !== cm.uid) {
        throw this.preconditionFailed(name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cm.uid ?? ''}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== cm.resourceVersion) {
        throw this.preconditionFailed(name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cm.resourceVersion ?? ''}`);
      }
      await runValidatingAdmission(this.admission, this.attrs('DELETE', rc, undefined, current, ''));
      const marked = this.markForDeletion(rc, structuredClone(current), options);
      if (marked === 'unchanged') return { object: current, deleted: false };
      if (rc.dryRun) return { object: marked ?? current, deleted: marked === undefined };
      if (marked === undefined) {
        try {
          const gone = await this.storage.delete(key, { preconditions: { uid: cm.uid!, resourceVersion: cm.resourceVersion! } });
          await this.strategy.release?.(gone, undefined);
          return { object: this.typed(gone), deleted: true };
        } catch (err) {
          if (err instanceof ApiError && err.reason === 'Conflict' && attempt < 10) continue;
          throw this.rewrite(err, name);
        }
      }
      try {
        delete marked.metadata.resourceVersion;
        const written = await this.storage.guaranteedUpdate(key, (cur) => {
          if (!cur || cur.metadata.resourceVersion !== cm.resourceVersion) throw new ApiError('Conflict', 'changed');
          return marked;
        });
        return { object: this.typed(written), deleted: false };
      } catch (err) {
        if (err instanceof ApiError && (err.reason === 'Conflict' || err.reason === 'NotFound') && attempt < 10) continue;
        throw this.rewrite(err, name);
      }
    }
  }

  /** The object marked for deletion; undefined = remove now; 'unchanged' = already pending. */
  private markForDeletion(rc: RequestContext, obj: KubeObject, options: DeleteOptions): KubeObject | undefined | 'unchanged' {
    const ctx = this.ctxOf(rc);
    const m = metaOf(obj);
    if (this.strategy.markForDeletion) return this.strategy.markForDeletion(obj, ctx);
    const finalizersBefore = [...(m.finalizers ?? [])];
    let finalizers = [...finalizersBefore];
    const policy = options.propagationPolicy ?? (options.orphanDependents === true ? 'Orphan' : options.orphanDependents === false ? 'Background' : undefined);
    if (policy === 'Foreground') finalizers = [...finalizers.filter((f) => f !== 'orphan'), ...(finalizers.includes('foregroundDeletion') ? [] : ['foregroundDeletion'])];
    else if (policy === 'Orphan') finalizers = [...finalizers.filter((f) => f !== 'foregroundDeletion'), ...(finalizers.includes('orphan') ? [] : ['orphan'])];
    else if (policy === 'Background') finalizers = finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion');
    const requested = options.gracePeriodSeconds ?? undefined;
    let grace = this.strategy.gracePeriodSeconds ? this.strategy.gracePeriodSeconds(obj, requested) : 0;
    if (grace < 0) grace = 0;
    const finalizersChanged = !isDeepStrictEqual(finalizers, finalizersBefore);
    if (finalizers.length > 0) m.finalizers = finalizers; else delete m.finalizers;

    if (m.deletionTimestamp) {
      // Already being deleted: a delete may only shorten the grace period.
      const existing = m.deletionGracePeriodSeconds ?? 0;
      if (grace >= existing && !(existing === 0 && finalizers.length === 0)) return finalizersChanged ? obj : 'unchanged';
      if (grace < existing) {
        const start = Date.parse(m.deletionTimestamp) - existing * 1000;
        m.deletionTimestamp = formatTime(start + grace * 1000);
        m.deletionGracePeriodSeconds = grace;
      }
      if (grace === 0 && finalizers.length === 0) return undefined;
      return obj;
    }
    if (grace === 0 && finalizers.length === 0) return undefined;
    m.deletionTimestamp = formatTime(ctx.now.getTime() + grace * 1000);
    m.deletionGracePeriodSeconds = grace;
    return obj;
  }

  /** deletecollection: deletes every selected object; answers the list of what was deleted or marked. */
  async deleteCollection(rc: RequestContext, namespace: string, params: ListParams, options: DeleteOptions): Promise<KubeList> {
    const list = await this.list(namespace, { ...(params.predicate ? { predicate: params.predicate } : {}) });
    const items: KubeObject[] = [];
    for (const obj of list.items) {
      try {
        items.push((await this.delete(rc, obj.metadata.namespace ?? '', obj.metadata.name, options)).object);
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
      }
    }
    return { ...list, items };
  }

  /**
   * Raw compare-and-swap of one object for subresources that change fields a normal update may
   * not (pods/binding sets spec.nodeName). fn may throw an ApiError to abort.
   */
  async mutate(namespace: string, name: string, fn: (current: KubeObject) => KubeObject): Promise<KubeObject> {
    try {
      return this.typed(await this.storage.guaranteedUpdate(this.key(namespace, name), (cur) => {
        if (!cur) throw errors.notFound(this.qualified, name);
        const next = fn(structuredClone(this.typed(cur)));
        delete next.metadata.resourceVersion;
        return next;
      }));
    } catch (err) {
      throw this.rewrite(err, name);
    }
  }

  // ---- helpers ----

  /** Checks body identity against the URL and sets kind/apiVersion. */
  checkIdentity(obj: KubeObject, namespace: string): KubeObject {
    if (typeof obj.metadata !== 'object' || obj.metadata === null) obj.metadata = {} as KubeObject['metadata'];
    const want = apiVersionOf(this.resource);
    if (obj.apiVersion !== undefined && obj.apiVersion !== '' && obj.apiVersion !== want) {
      throw new ApiError('BadRequest', `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${want})`);
    }
    if (obj.kind !== undefined && obj.kind !== '' && obj.kind !== this.resource.kind) {
      throw new ApiError('BadRequest', `the kind in the data (${String(obj.kind)}) does not match the expected kind (${this.resource.kind})`);
    }
    obj.apiVersion = want;
    obj.kind = this.resource.kind;
    if (this.resource.namespaced) {
      const ns = obj.metadata.namespace;
      if (ns && namespace && ns !== namespace) {
        throw new ApiError('BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
      }
      if (namespace) obj.metadata.namespace = namespace;
    } else {
      delete obj.metadata.namespace;
    }
    return obj;
  }

  private tracksGeneration(obj: KubeObject): boolean {
    return this.strategy.tracksGeneration ?? obj['spec'] !== undefined;
  }

  private validateOrThrow(obj: KubeObject, old: KubeObject | undefined, target: UpdateTarget = 'main'): void {
    const errs: FieldError[] = [];
    if (this.validator) errs.push(...this.validator(this.resource, obj, old));
    else if (!obj.metadata.name) {
      errs.push({ type: 'FieldValueRequired', field: 'metadata.name', message: 'metadata.name: Required value: name or generateName is required' });
    }
    if (old) errs.push(...(this.strategy.validateUpdate?.(obj, old, target) ?? []));
    else errs.push(...(this.strategy.validate?.(obj) ?? []));
    if (errs.length > 0) throw invalidError(this.resource, obj.metadata.name ?? '', errs);
  }

  private preconditionFailed(name: string, message: string): ApiError {
    return new ApiError('Conflict', message, { details: { name, kind: this.resource.resource, ...(this.resource.group ? { group: this.resource.group } : {}) } });
  }

  private attrs(operation: AdmissionOperation, rc: RequestContext, object: KubeObject | undefined, oldObject: KubeObject | undefined, subresource: string) {
    const ref = object ?? oldObject;
    return {
      operation, resource: this.resource, subresource,
      namespace: ref?.metadata.namespace ?? '', name: ref?.metadata.name ?? '',
      object, oldObject, user: rc.user, dryRun: rc.dryRun, warnings: rc.warnings,
    };
  }

  /** Rewrites Storage's generic errors with this resource's name, as upstream messages read. */
  rewrite(err: unknown, name: string): unknown {
    if (!(err instanceof ApiError)) return err;
    switch (err.reason) {
      case 'NotFound': return errors.notFound(this.qualified, name);
      case 'AlreadyExists': return errors.alreadyExists(this.qualified, name);
      // Server-side apply's field conflicts (with causes) keep their own message.
      case 'Conflict': return err.message.startsWith('Precondition failed') || err.message.startsWith('Operation cannot be fulfilled') || err.details?.causes?.length
        ? err : errors.conflict(this.qualified, name);
      default: return err;
    }
  }
}
