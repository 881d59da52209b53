/**
 * The events.k8s.io/v1 Events resource: a Store that serves the core Events store's objects
 * converted (conversion.ts), as upstream serves one storage under two group versions. Reads
 * convert what the core store returns (so the watch cache's cached core JSON is never sent for
 * this view: each converted object is encoded afresh); writes convert the body to core/v1 and go
 * through the core store (its strategy, validation, admission and etcd key). events.k8s.io/v1
 * creates are validated first with upstream's stricter events/v1 rules.
 */
import { field, invalidError, isQualifiedName, type FieldError, type KubeList, type KubeObject, type WatchEvent, EventsV1, type DeleteOptions } from '@mk8s/api';
import { Store, type DeleteResult, type ListParams, type RequestContext, type StoreOptions, type WatchParams } from '../generic/store.js';
import type { UpdateTarget } from '../generic/strategy.js';
import { coreToEventsV1, eventsV1ToCore } from './conversion.js';

const isEvent = (o: unknown): o is KubeObject => !!o && typeof o === 'object' && (o as { kind?: unknown }).kind === 'Event';
const view = (o: KubeObject): KubeObject => coreToEventsV1(o);

/**
 * ValidateEventCreate's events.k8s.io/v1 rules (pkg/apis/core/validation/events.go: the legacy
 * rules of an event with eventTime, validateV1EventSeries and the strict v1 ones). Paths are
 * upstream's, which validates the internal (core) object: the note's limit is reported on
 * `message`, the deprecated fields under their core names.
 */
export function validateEventsV1Create(e: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const s = (k: string) => (typeof e[k] === 'string' ? e[k] as string : '');
  const atMost = (path: string, n: number) => field.invalid(path, '', `can have at most ${n} characters`);
  const rc = s('reportingController');
  if (!rc) errs.push(field.required('reportingController'));
  for (const msg of isQualifiedName(rc)) errs.push(field.invalid('reportingController', rc, msg));
  if (!s('reportingInstance')) errs.push(field.required('reportingInstance'));
  if (s('reportingInstance').length > 128) errs.push(atMost('reportingInstance', 128));
  if (!s('action')) errs.push(field.required('action'));
  if (s('action').length > 128) errs.push(atMost('action', 128));
  if (!s('reason')) errs.push(field.required('reason'));
  if (s('reason').length > 128) errs.push(atMost('reason', 128));
  if (Buffer.byteLength(s('note')) > 1024) errs.push(atMost('message', 1024));
  const series = e['series'] as { count?: unknown; lastObservedTime?: unknown } | null | undefined;
  if (series && typeof series === 'object') {
    if (typeof series.count !== 'number' || series.count < 2) errs.push(field.invalid('series.count', '', 'should be at least 2'));
    if (!series.lastObservedTime) errs.push(field.required('series.lastObservedTime'));
  }
  if (!e['eventTime']) errs.push(field.required('eventTime'));
  if (s('type') !== 'Normal' && s('type') !== 'Warning') errs.push(field.invalid('type', '', `has invalid value: ${s('type')}`));
  if (e['deprecatedFirstTimestamp']) errs.push(field.invalid('firstTimestamp', '', 'needs to be unset'));
  if (e['deprecatedLastTimestamp']) errs.push(field.invalid('lastTimestamp', '', 'needs to be unset'));
  if (e['deprecatedCount']) errs.push(field.invalid('count', '', 'needs to be unset'));
  const src = e['deprecatedSource'] as { component?: unknown; host?: unknown } | null | undefined;
  if (src && (src.component || src.host)) errs.push(field.invalid('source', '', 'needs to be unset'));
  return errs;
}

export class EventsV1Store extends Store {
  /** core: the core/v1 Events store, which owns the objects. */
  constructor(private readonly core: Store, opts: Omit<StoreOptions, 'strategy'>) {
    super({ ...opts, strategy: { resource: EventsV1, allowCreateOnUpdate: true } });
  }

  private wrap(p: ((o: KubeObject) => boolean) | undefined): ((o: KubeObject) => boolean) | undefined {
    return p ? (o) => p(view(o)) : undefined;
  }

  private listParams(p: ListParams): ListParams {
    const w = this.wrap(p.predicate);
    const { predicate: _drop, ...rest } = p;
    return w ? { ...rest, predicate: w } : rest;
  }

  private viewList(list: KubeList): KubeList {
    return { ...list, apiVersion: 'events.k8s.io/v1', kind: 'EventList', items: list.items.map(view) };
  }

  override async get(namespace: string, name: string, opts: { resourceVersion?: string } = {}): Promise<KubeObject> {
    return view(await this.core.get(namespace, name, opts));
  }

  override async list(namespace: string, p: ListParams = {}): Promise<KubeList> {
    return this.viewList(await this.core.list(namespace, this.listParams(p)));
  }

  override async *watch(namespace: string, p: WatchParams): AsyncIterable<WatchEvent> {
    const w = this.wrap(p.predicate);
    const { predicate: _drop, ...rest } = p;
    for await (const ev of this.core.watch(namespace, w ? { ...rest, predicate: w } : rest)) {
      yield isEvent(ev.object) ? { type: ev.type, object: view(ev.object) } : ev;
    }
  }

  override async create(rc: RequestContext, namespace: string, body: KubeObject, _opts: { bodyOwned?: boolean } = {}): Promise<KubeObject> {
    const errs = validateEventsV1Create(body as unknown as Record<string, unknown>);
    if (errs.length) throw invalidError(EventsV1, body.metadata?.name ?? '', errs);
    return view(await this.core.create(rc, namespace, eventsV1ToCore(this.checkIdentity(body, namespace)), { bodyOwned: true }));
  }

  override async update(rc: RequestContext, namespace: string, name: string, body: KubeObject, target: UpdateTarget = 'main'): Promise<{ object: KubeObject; created: boolean }> {
    const r = await this.core.update(rc, namespace, name, eventsV1ToCore(this.checkIdentity(body, namespace)), target);
    return { object: view(r.object), created: r.created };
  }

  override async updateWith(rc: RequestContext, namespace: string, name: string,
    computeNext: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>, target: UpdateTarget, hasResourceVersion = false): Promise<{ object: KubeObject; created: boolean }> {
    const r = await this.core.updateWith(rc, namespace, name,
      async (current) => eventsV1ToCore(await computeNext(current ? view(current) : undefined)), target, hasResourceVersion);
    return { object: view(r.object), created: r.created };
  }

  override async delete(rc: RequestContext, namespace: string, name: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    const r = await this.core.delete(rc, namespace, name, options);
    return { object: view(r.object), deleted: r.deleted };
  }

  override async deleteCollection(rc: RequestContext, namespace: string, params: ListParams, options: DeleteOptions): Promise<KubeList> {
    return this.viewList(await this.core.deleteCollection(rc, namespace, this.listParams(params), options));
  }
}
