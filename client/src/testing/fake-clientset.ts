/**
 * FakeClientset: a Clientset over an in-memory ObjectTracker that records every call as an
 * Action and lets tests inject results or errors with reactors (client-go kubernetes/fake).
 */
import { ApiError, errors, labelSelectorFromSet, selectorToString, applyJsonPatch, applyMergePatch, applyStrategicMergePatch, lookupKind, lookupResource, qualifiedResource, type DeleteOptions, type KubeList, type KubeObject, type ResourceDescriptor, type WatchEvent } from '@mk8s/api';
import type { Clock } from '@mk8s/component-base';
import type { Clientset, ListOptions, PatchType, ResourceClient, WatchOptions, WriteOptions } from '../interfaces.js';
import { ObjectTracker } from './object-tracker.js';

export type ActionVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One recorded client call. */
export interface Action {
  verb: ActionVerb;
  /** The plural resource name, e.g. 'pods' (group not included; see `group`). */
  resource: string;
  group: string;
  subresource?: string;
  /** '' for cluster-scoped or all-namespaces calls. */
  namespace: string;
  name?: string;
  /** The object sent (create/update) or the patch body (patch). */
  object?: unknown;
  patchType?: PatchType;
  listOptions?: ListOptions | WatchOptions;
  deleteOptions?: DeleteOptions;
}

/** What a reactor returns when it handles an action; undefined lets the next reactor (and finally the tracker) run. */
export type ReactorResult = { handled: true; result?: unknown; error?: unknown } | undefined | void;
export type Reactor = (action: Action) => ReactorResult;

/** 'create pods', 'update replicasets/status', 'delete pods' (for table-driven assertions). */
export function formatAction(a: Action): string {
  return `${a.verb} ${a.resource}${a.subresource ? '/' + a.subresource : ''}`;
}

/** Finds a served descriptor for obj's apiVersion and kind. */
export function descriptorOf(obj: { apiVersion?: string | undefined; kind?: string | undefined }): ResourceDescriptor {
  const r = obj.apiVersion && obj.kind ? lookupKind(obj.apiVersion, obj.kind) : undefined;
  if (!r) throw new Error(`no served resource for apiVersion ${obj.apiVersion} kind ${obj.kind}: set both on seeded objects`);
  return r;
}

/** Options for {@link FakeClientset}. */
export interface FakeClientsetOptions {
  /** Seeded objects (need apiVersion and kind); not recorded as actions. */
  objects?: KubeObject[];
  clock?: Clock;
  /**
   * Delete pods bound to a node gracefully (deletionTimestamp + grace period; gone after a delete
   * with gracePeriodSeconds 0), exactly as the apiserver does. Off by default only because tests
   * written earlier expect bound pods to vanish at once; new tests should turn it on.
   * @default false
   */
  gracefulDeletion?: boolean;
}

export class FakeClientset implements Clientset {
  readonly tracker: ObjectTracker;
  private recorded: Action[] = [];
  private reactors: { verb: string; resource: string; fn: Reactor }[] = [];

  constructor(o: FakeClientsetOptions = {}) {
    this.tracker = new ObjectTracker({ ...(o.clock ? { clock: o.clock } : {}), ...(o.gracefulDeletion ? { gracefulDeletion: true } : {}) });
    for (const obj of o.objects ?? []) this.seed(obj);
  }

  /** Adds objects straight into the tracker (no action recorded). Returns the stored copies. */
  seed<T extends { apiVersion?: string; kind?: string; metadata?: unknown }>(...objs: T[]): T[] {
    return objs.map((obj) => {
      const r = descriptorOf(obj);
      const o = obj as unknown as KubeObject;
      return this.tracker.create(r, o.metadata?.namespace, o) as unknown as T;
    });
  }

  resource<T extends KubeObject = KubeObject>(r: ResourceDescriptor<unknown>, namespace?: string): ResourceClient<T> {
    return new FakeResourceClient<T>(this, r as ResourceDescriptor, r.namespaced ? namespace ?? '' : '');
  }

  /** Every call so far, in order. */
  actions(): Action[] { return [...this.recorded]; }
  /** Calls formatted as 'verb resource[/subresource]', optionally without reads (get/list/watch). */
  actionStrings(o: { writesOnly?: boolean } = {}): string[] {
    return this.recorded.filter((a) => !o.writesOnly || !['get', 'list', 'watch'].includes(a.verb)).map(formatAction);
  }
  clearActions(): void { this.recorded = []; }

  /**
   * Adds a reactor run before the others. verb and resource may be '*'; resource 'pods' matches
   * pods and its subresources, 'pods/status' only the subresource. A reactor that throws injects
   * that error, as does returning { handled: true, error }.
   */
  prependReactor(verb: ActionVerb | '*', resource: string, fn: Reactor): void {
    this.reactors.unshift({ verb, resource, fn });
  }

  /** @internal Records the action and runs reactors, then the default behaviour. */
  async invoke<R>(action: Action, fallback: () => R): Promise<R> {
    this.recorded.push(action);
    // Yield once so callers see real async behaviour (as over HTTP).
    await Promise.resolve();
    for (const r of this.reactors) {
      if (r.verb !== '*' && r.verb !== action.verb) continue;
      const full = action.subresource ? `${action.resource}/${action.subresource}` : action.resource;
      if (r.resource !== '*' && r.resource !== action.resource && r.resource !== full) continue;
      const res = r.fn(action);
      if (res?.handled) {
        if (res.error !== undefined) throw res.error;
        return res.result as R;
      }
    }
    return fallback();
  }
}

class FakeResourceClient<T extends KubeObject> implements ResourceClient<T> {
  constructor(private readonly c: FakeClientset, private readonly r: ResourceDescriptor, private readonly ns: string) {}

  private action(verb: ActionVerb, extra: Partial<Action> = {}): Action {
    return { verb, resource: this.r.resource, group: this.r.group, namespace: this.ns, ...extra };
  }
  private get t(): ObjectTracker { return this.c.tracker; }
  private nsFor(obj?: KubeObject): string | undefined {
    return this.ns || obj?.metadata?.namespace || undefined;
  }

  get(name: string): Promise<T> {
    return this.c.invoke(this.action('get', { name }), () => this.t.get(this.r, this.ns, name) as T);
  }

  list(opts: ListOptions & { signal?: AbortSignal } = {}): Promise<KubeList<T>> {
    const { signal: _s, ...listOptions } = opts;
    return this.c.invoke(this.action('list', { listOptions }), () => {
      const { items, resourceVersion } = this.t.list(this.r, this.ns, opts);
      return { apiVersion: items[0]?.apiVersion ?? (this.r.group ? `${this.r.group}/${this.r.version}` : this.r.version), kind: this.r.listKind, metadata: { resourceVersion }, items: items as T[] };
    });
  }

  create(obj: T, _opts?: WriteOptions): Promise<T> {
    return this.c.invoke(this.action('create', { namespace: this.ns || obj.metadata?.namespace || '', object: structuredClone(obj) }), () => {
      const objNs = obj.metadata?.namespace;
      if (this.r.namespaced && ((!this.ns && !objNs) || (this.ns && objNs && objNs !== this.ns))) {
        throw new ApiError('BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
      }
      return this.t.create(this.r, this.nsFor(obj), obj) as T;
    });
  }

  update(obj: T, _opts?: WriteOptions): Promise<T> {
    return this.c.invoke(this.action('update', { name: obj.metadata?.name ?? '', object: structuredClone(obj) }), () =>
      this.t.update(this.r, this.nsFor(obj), obj) as T);
  }

  updateStatus(obj: T, _opts?: WriteOptions): Promise<T> {
    return this.c.invoke(this.action('update', { subresource: 'status', name: obj.metadata?.name ?? '', object: structuredClone(obj) }), () =>
      this.t.update(this.r, this.nsFor(obj), obj, { statusOnly: true }) as T);
  }

  patch(name: string, type: PatchType, patch: unknown, opts: WriteOptions & { subresource?: string } = {}): Promise<T> {
    const sub = opts.subresource ? { subresource: opts.subresource } : {};
    return this.c.invoke(this.action('patch', { name, patchType: type, object: structuredClone(patch), ...sub }), () => {
      const apply = (cur: KubeObject): KubeObject => {
        let next: KubeObject;
        switch (type) {
          // The apiserver's own patch implementations, so fakes patch exactly as the server does.
          case 'json': next = applyJsonPatch(cur, patch); break;
          case 'strategic': next = applyStrategicMergePatch(cur, patch, this.r); break;
          default: next = applyMergePatch(cur, patch);
        }
        if (opts.subresource === 'status') { const keep = structuredClone(cur); keep['status'] = next['status']; return keep; }
        return next;
      };
      try {
        return this.t.mutate(this.r, this.ns, name, apply, { specChange: opts.subresource !== 'status' }) as T;
      } catch (err) {
        if (type === 'apply' && err instanceof ApiError && err.reason === 'NotFound') return this.t.create(this.r, this.ns || undefined, patch as KubeObject) as T;
        throw err;
      }
    });
  }

  delete(name: string, opts: WriteOptions & DeleteOptions = {}): Promise<void> {
    const { signal: _s, fieldManager: _f, dryRun: _d, ...deleteOptions } = opts;
    return this.c.invoke(this.action('delete', { name, deleteOptions: deleteOptions as DeleteOptions }), () => {
      this.t.delete(this.r, this.ns, name, {
        ...(opts.preconditions ? { preconditions: opts.preconditions as { uid?: string; resourceVersion?: string } } : {}),
        ...(opts.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: opts.gracePeriodSeconds } : {}),
        ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : opts.orphanDependents === true ? { propagationPolicy: 'Orphan' } : {}),
      });
    });
  }

  watch(opts: WatchOptions & { signal?: AbortSignal } = {}): AsyncIterable<WatchEvent<T>> {
    const { signal, ...listOptions } = opts;
    const c = this.c;
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        const q = await c.invoke(self.action('watch', { listOptions }), () => self.t.watch(self.r, self.ns, { ...opts, signal }));
        yield* q as AsyncIterable<WatchEvent<T>>;
      },
    };
  }

  createSubresource(name: string, subresource: string, body: unknown, _opts?: WriteOptions): Promise<unknown> {
    return this.c.invoke(this.action('create', { name, subresource, object: structuredClone(body) }), () => {
      if (qualifiedResource(this.r) === 'pods' && subresource === 'binding') {
        const target = (body as { target?: { name?: string } }).target?.name;
        this.t.mutate(this.r, this.ns, name, (pod) => {
          const spec = (pod['spec'] ?? {}) as { nodeName?: string };
          if (spec.nodeName) throw new ApiError('Conflict', `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${spec.nodeName}"`);
          pod['spec'] = { ...spec, nodeName: target };
          return pod;
        });
        return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
      }
      if (qualifiedResource(this.r) === 'pods' && subresource === 'eviction') {
        this.t.delete(this.r, this.ns, name);
        return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
      }
      return body;
    });
  }

  updateSubresource(name: string, subresource: string, body: unknown, _opts?: WriteOptions): Promise<unknown> {
    return this.c.invoke(this.action('update', { name, subresource, object: structuredClone(body) }), () => {
      const b = (body ?? {}) as { metadata?: { name?: string; resourceVersion?: string }; spec?: { replicas?: unknown } };
      if (subresource === 'status') return this.t.update(this.r, this.nsFor(body as KubeObject), body as KubeObject, { statusOnly: true });
      if (subresource !== 'scale') throw new ApiError('NotFound', `the server could not find the requested resource (put ${qualifiedResource(this.r)} ${name}/${subresource})`);
      if (b.metadata?.name !== undefined && b.metadata.name !== name) throw new ApiError('BadRequest', `the name of the object (${b.metadata.name}) does not match the name on the URL (${name})`);
      const replicas = b.spec?.replicas ?? 0;
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
        throw errors.invalid('Scale', 'autoscaling', name, [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `spec.replicas: Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }]);
      }
      // As the apiserver's ScaleREST: the body's resourceVersion (when set) must be the object's.
      const rv = b.metadata?.resourceVersion;
      return scaleOf(this.t.mutate(this.r, this.ns, name, (cur) => {
        cur['spec'] = { ...((cur['spec'] ?? {}) as Record<string, unknown>), replicas };
        if (rv) cur.metadata.resourceVersion = rv;
        return cur;
      }, { specChange: true }));
    });
  }

  getSubresource(name: string, subresource: string, _opts?: { signal?: AbortSignal; query?: Record<string, string> }): Promise<unknown> {
    return this.c.invoke(this.action('get', { name, subresource }), () => {
      const obj = this.t.get(this.r, this.ns, name);
      if (subresource === 'scale') return scaleOf(obj);
      if (subresource === 'log') return '';
      return obj;
    });
  }
}

/** The autoscaling/v1 Scale the apiserver's scale subresource serves for obj. */
function scaleOf(obj: KubeObject): KubeObject {
  const spec = obj['spec'] as { replicas?: number; selector?: Record<string, unknown> } | undefined;
  const status = obj['status'] as { replicas?: number } | undefined;
  // status.selector as the apiserver's scale subresource prints it (an RC's selector is a label map).
  let selector = '';
  try {
    const sel = spec?.selector;
    selector = !sel ? '' : 'matchLabels' in sel || 'matchExpressions' in sel ? selectorToString(sel as never) : labelSelectorFromSet(sel as Record<string, string>).toString();
  } catch { selector = ''; }
  return { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace, uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion },
    spec: { replicas: spec?.replicas ?? 0 }, status: { replicas: status?.replicas ?? 0, ...(selector ? { selector } : {}) } } as KubeObject;
}

/** Looks a descriptor up by plural name and group (for tests naming resources by string). */
export function resourceNamed(resource: string, group = ''): ResourceDescriptor {
  const r = lookupResource(group, resource);
  if (!r) throw new Error(`unknown resource ${group ? resource + '.' + group : resource}`);
  return r;
}
