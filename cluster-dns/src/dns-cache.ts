/**
 * DnsCache: keeps a MemoryRecordStore in step with the shared informers. Handlers only name what
 * changed (a Service key, a namespace, a pod key); the records are then rebuilt from the listers
 * (level-driven: the event's object is never trusted over the cache), synchronously, so a watch
 * event is visible to the next query. Informer caches are never mutated.
 */
import type { EndpointSlice, KubeObject, Named, Namespace, Pod, Service } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import { MemoryRecordStore, type RecordStoreOptions } from './record-store.js';
import { SERVICE_NAME_LABEL } from './records.js';

type Meta = { metadata?: { name?: string; namespace?: string; labels?: Record<string, string> } };
const BY_SERVICE = 'byService';
const keyOf = (o: Meta) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const sliceService = (s: Meta) => { const n = s.metadata?.labels?.[SERVICE_NAME_LABEL]; return n ? `${s.metadata?.namespace ?? ''}/${n}` : undefined; };

export type ServiceObj = Named<Service> & KubeObject;
export type EndpointSliceObj = Named<EndpointSlice> & KubeObject;
export type NamespaceObj = Named<Namespace> & KubeObject;
export type PodObj = Named<Pod> & KubeObject;

export interface DnsCacheOptions {
  records: RecordStoreOptions;
  services: SharedInformer<ServiceObj>;
  endpointSlices: SharedInformer<EndpointSliceObj>;
  namespaces: SharedInformer<NamespaceObj>;
  /** Only in `pods: verified` mode (a Pod informer is the largest cache; insecure mode needs none). */
  pods?: SharedInformer<PodObj>;
  /** Called after every change (metrics). */
  onChange?: () => void;
}

export class DnsCache {
  readonly store: MemoryRecordStore;
  constructor(private readonly o: DnsCacheOptions) {
    this.store = new MemoryRecordStore(o.records);
    o.endpointSlices.addIndexer(BY_SERVICE, (s) => { const k = sliceService(s); return k ? [k] : []; });
    const svc = (s: Meta) => this.syncService(keyOf(s));
    const slice = (s: Meta) => { const k = sliceService(s); if (k) this.syncService(k); };
    o.services.addEventHandler({ onAdd: svc, onUpdate: (_a, b) => svc(b), onDelete: svc });
    // A slice may change its service label: both old and new owners are re-derived.
    o.endpointSlices.addEventHandler({ onAdd: slice, onUpdate: (a, b) => { slice(a); slice(b); }, onDelete: slice });
    const ns = (n: Meta) => this.syncNamespace(n.metadata?.name ?? '');
    o.namespaces.addEventHandler({ onAdd: ns, onUpdate: (_a, b) => ns(b), onDelete: ns });
    const pod = (p: Meta) => this.syncPod(keyOf(p));
    o.pods?.addEventHandler({ onAdd: pod, onUpdate: (_a, b) => pod(b), onDelete: pod });
  }

  /** True once every informer has delivered its first list (then /readyz turns ready). */
  hasSynced(): boolean {
    return this.o.services.hasSynced() && this.o.endpointSlices.hasSynced() && this.o.namespaces.hasSynced() && (this.o.pods?.hasSynced() ?? true);
  }

  syncService(key: string): void {
    this.store.setService(key, this.o.services.lister.get(key), this.o.endpointSlices.lister.byIndex(BY_SERVICE, key));
    this.o.onChange?.();
  }

  syncNamespace(name: string): void {
    this.store.setNamespace(name, this.o.namespaces.lister.get(name) !== undefined);
    this.o.onChange?.();
  }

  syncPod(key: string): void {
    this.store.setPod(key, this.o.pods?.lister.get(key));
    this.o.onChange?.();
  }
}
