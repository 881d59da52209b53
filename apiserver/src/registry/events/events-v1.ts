/**
 * The events.k8s.io/v1 Events resource: a Store that serves the core Events store's objects
 * converted (conversion.ts), as upstream serves one storage under two group versions. Reads
 * convert what the core store returns (so the watch cache's cached core JSON is never sent for
 * this view: each converted object is encoded afresh); writes convert the body to core/v1 and go
 * through the core store (its strategy, validation, admission and etcd key). events.k8s.io/v1
 * creates are validated first with upstream's stricter events/v1 rules.
 */
import { field, invalidError, type FieldError, type KubeList, type KubeObject, type WatchEvent, EventsV1, type DeleteOptions } from '@mk8s/api';
import { Store, type DeleteResult, type ListParams, type RequestContext, type StoreOptions, type WatchParams } from '../generic/store.js';
import type { UpdateTarget } from '../generic/strategy.js';
import { coreToEventsV1, eventsV1ToCore } from './conversion.js';

const isEvent = (o: unknown): o is KubeObject => !!o && typeof o === 'object' && (o as { kind?: unknown }).kind === 'Event';
const view = (o: KubeObject): KubeObject => coreToEventsV1(o);

/** ValidateEventCreate's events.k8s.io/v1 rules (the core ones run on the converted object). */
export function validateEventsV1Create(e: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const s = (k: string) => (typeof e[k] === 'string' ? e[k] as string : '');
  if (!e['eventTime']) errs.push(field.required('eventTime'));
  if (s('type') !== 'Normal' && s('type') !== 'Warning') errs.push(field.invalid('type', '', `has invalid value: ${s('type')}`));
  if (!s('reportingController')) errs.push(field.required('reportingController'));
  if (!s('reportingInstance')) errs.push(field.required('reportingInstance'));
  else if (s('reportingInstance').length > 128) errs.push(field.tooLong('reportingInstance', '', 128));
  if (!s('action')) errs.push(field.required('action'));
  else if (s('action').length > 128) errs.push(field.tooLong('action', '', 128));
  if (!s('reason')) errs.push(field.required('reason'));
  else if (s('reason').length > 128) errs.push(field.tooLong('reason', '', 128));
  if (Buffer.byteLength(s('note')) > 1024) errs.push(field.tooLong('note', '', 1024));
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
