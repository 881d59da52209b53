/**
 * The Registry: every served resource registers its storage and its map of subresources
 * (upstream's APIGroupInfo.VersionedResourcesStorageMap: "pods" → PodStorage, "pods/status" →
 * StatusREST, "pods/binding" → BindingREST, ...). Discovery, OpenAPI, the request parser and the
 * generic handlers all read this one table, and it may change at run time (CustomResourceDefinitions
 * add and remove resources): listeners hear every change and the generation counts them.
 */
import { apiVersionOf, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type { Store } from './generic/store.js';
import type { SubresourceContext } from '../endpoints/subresources.js';
import type { PatchContentType } from '../endpoints/body.js';

/** What a subresource answers with (discovery and OpenAPI). Omitted group/version/kind: the parent's. */
export interface SubresourceDiscovery {
  readonly group?: string;
  readonly version?: string;
  readonly kind?: string;
  readonly verbs: readonly string[];
}

/** One subresource: its discovery facts and how it serves a request. */
export interface Subresource extends SubresourceDiscovery {
  /**
   * Serves a request on `<resource>/<name>/<sub>` whose verb is in `verbs`. Absent: the
   * subresource is served elsewhere (exec/attach/portforward arrive as HTTP upgrades) and a plain
   * request answers 404.
   */
  readonly serve?: (ctx: SubresourceContext) => Promise<unknown>;
}

/** A Table for a list of objects (meta.k8s.io/v1), when a resource prints its own columns. */
export type TablePrinter = (objects: KubeObject[], opts: { includeObject?: string; noHeaders?: boolean; resourceVersion?: string; continue?: string }) => unknown;

/** The OpenAPI v3 component schemas a resource publishes itself (custom resources). */
export interface PublishedSchemas {
  /** The definition name of the kind, e.g. com.example.stable.v1.CronTab. */
  readonly kindSchema: string;
  /** The definition name of its list kind. */
  readonly listSchema: string;
  /** Every schema the document needs for this resource, by definition name. */
  readonly schemas: Readonly<Record<string, Record<string, unknown>>>;
}

export interface ResourceEntry {
  readonly descriptor: ResourceDescriptor;
  /** The resource's storage; undefined when its own routes answer it (the review kinds). */
  readonly store: Store | undefined;
  readonly subresources: ReadonlyMap<string, Subresource>;
  /** Server-side Table printing instead of the built-in printers (CRD additionalPrinterColumns). */
  readonly table?: TablePrinter;
  /** fieldValidation's unknown-field check instead of the built-in schemas'. */
  readonly unknownFields?: (obj: unknown) => string[];
  /** Patch types refused with 415 (custom resources refuse strategic merge patch). */
  readonly unsupportedPatchTypes?: readonly PatchContentType[];
  /** OpenAPI schemas the resource brings (custom resources); built-in kinds use the generated ones. */
  readonly openapi?: PublishedSchemas;
}

export type RegistryChange = { type: 'added' | 'removed'; entry: ResourceEntry };

const keyOf = (group: string, version: string, resource: string): string => `${group}/${version}/${resource}`;

export class Registry {
  private readonly byKey = new Map<string, ResourceEntry>();
  private readonly byDescriptor = new Map<ResourceDescriptor, ResourceEntry>();
  private readonly listeners = new Set<(c: RegistryChange) => void>();
  private order: ResourceEntry[] = [];
  private gen = 0;

  constructor(entries: Iterable<ResourceEntry> = []) {
    for (const e of entries) this.add(e);
  }

  /** Counts changes: documents built from the registry are current while it stays the same. */
  get generation(): number { return this.gen; }

  /** The Store of a resource (by descriptor, or by group/version/resource for a copy of one). */
  get(r: ResourceDescriptor): Store | undefined {
    return this.entryOf(r)?.store;
  }

  entryOf(r: Pick<ResourceDescriptor, 'group' | 'version' | 'resource'>): ResourceEntry | undefined {
    return this.byDescriptor.get(r as ResourceDescriptor) ?? this.byKey.get(keyOf(r.group, r.version, r.resource));
  }

  /** The resource a URL names (group, version and plural). */
  lookup(group: string, version: string, resource: string): ResourceEntry | undefined {
    return this.byKey.get(keyOf(group, version, resource));
  }

  /** The resource of a manifest's apiVersion and kind. */
  lookupKind(apiVersion: string, kind: string): ResourceEntry | undefined {
    for (const e of this.order) if (e.descriptor.kind === kind && apiVersionOf(e.descriptor) === apiVersion) return e;
    return undefined;
  }

  /** Every entry, in registration order (the order categories such as `all` expand in). */
  entries(): readonly ResourceEntry[] { return this.order; }

  /** Every descriptor, in registration order. */
  resources(): ResourceDescriptor[] { return this.order.map((e) => e.descriptor); }

  /** Adds a resource, or replaces the one with the same group/version/resource. */
  add(entry: ResourceEntry): void {
    const d = entry.descriptor;
    const key = keyOf(d.group, d.version, d.resource);
    const old = this.byKey.get(key);
    if (old) {
      this.byDescriptor.delete(old.descriptor);
      this.order = this.order.map((e) => (e === old ? entry : e));
    } else {
      this.order = [...this.order, entry];
    }
    this.byKey.set(key, entry);
    this.byDescriptor.set(d, entry);
    this.gen++;
    if (old) this.emit({ type: 'removed', entry: old });
    this.emit({ type: 'added', entry });
  }

  /** Stops serving a resource; true if it was served. */
  remove(r: Pick<ResourceDescriptor, 'group' | 'version' | 'resource'>): boolean {
    const e = this.entryOf(r);
    if (!e) return false;
    const d = e.descriptor;
    this.byKey.delete(keyOf(d.group, d.version, d.resource));
    this.byDescriptor.delete(d);
    this.order = this.order.filter((x) => x !== e);
    this.gen++;
    this.emit({ type: 'removed', entry: e });
    return true;
  }

  /** Hears every later add and remove; returns the unsubscribe. */
  onChange(fn: (c: RegistryChange) => void): () => void {
    this.listeners.add(fn);
    return () => { this.listeners.delete(fn); };
  }

  private emit(c: RegistryChange): void {
    for (const fn of this.listeners) fn(c);
  }
}
