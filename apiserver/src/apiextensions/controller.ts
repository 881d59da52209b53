/**
 * The CRD controllers every apiserver runs in-process (upstream's naming, establishing and
 * finalizing controllers plus the crdHandler's serving info): watches CustomResourceDefinitions,
 * decides their NamesAccepted/Established conditions (pure: crdStatusFor), serves the versions of
 * established ones through the registry, and on deletion removes every custom object before
 * letting the CRD go. Several apiservers may run it at once: status writes are compare-and-swap
 * and a lost race is settled by the next event.
 */
import { ApiError, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type { Clock, Logger } from '@mk8s/component-base';
import type { Registry } from '../registry/registry.js';
import type { RequestContext, Store } from '../registry/generic/store.js';
import { setCondition } from './crd-strategy.js';
import { applySchemaOf, customResourceEntries, type CustomStoreOptions } from './custom-resource.js';
import { registerApplySchema } from '../registry/generic/apply.js';
import { CLEANUP_FINALIZER, isTrue, type Crd, type CrdCondition, type CrdNames, type CrdStatus } from './types.js';

const SYSTEM: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, warnings: [] };
const rc = (): RequestContext => ({ ...SYSTEM, warnings: [] });

/** Names a CRD asks for that another CRD of its group already holds (upstream naming controller). */
export function nameConflicts(names: CrdNames, others: readonly CrdNames[]): string | undefined {
  for (const o of others) {
    if (o.plural === names.plural) return `"${names.plural}" is already in use`;
    if (names.singular && (o.singular === names.singular || o.plural === names.singular)) return `"${names.singular}" is already in use`;
    for (const s of names.shortNames ?? []) if ((o.shortNames ?? []).includes(s)) return `"${s}" is already in use`;
    if (o.kind === names.kind) return `"${names.kind}" is already in use`;
    if (names.listKind && o.listKind === names.listKind) return `"${names.listKind}" is already in use`;
  }
  return undefined;
}

/**
 * The status a CRD should have given the other CRDs: acceptedNames (kept as they were on a
 * conflict), NamesAccepted, and Established once names are accepted (it then stays True).
 */
export function crdStatusFor(crd: Crd, all: readonly Crd[], now: Date): CrdStatus {
  const status: CrdStatus = structuredClone(crd.status ?? {});
  const others = all.filter((c) => c.metadata.name !== crd.metadata.name && c.spec.group === crd.spec.group)
    .map((c) => c.status?.acceptedNames).filter((n): n is CrdNames => !!n?.plural);
  const conflict = nameConflicts(crd.spec.names, others);
  let accepted: CrdCondition;
  if (conflict) {
    accepted = { type: 'NamesAccepted', status: 'False', reason: 'NameConflict', message: conflict };
  } else {
    status.acceptedNames = structuredClone(crd.spec.names);
    accepted = { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
  }
  status.conditions = setCondition(status.conditions, accepted, now);
  if (!conflict && !isTrue(crd, 'Established')) {
    status.conditions = setCondition(status.conditions, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
  } else if (conflict && !(status.conditions ?? []).some((c) => c.type === 'Established')) {
    status.conditions = setCondition(status.conditions, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
  }
  return status;
}

/** Compares statuses ignoring condition timestamps' formatting differences (none here) and key order. */
const sameStatus = (a: CrdStatus | undefined, b: CrdStatus): boolean => JSON.stringify(normalize(a ?? {})) === JSON.stringify(normalize(b));
function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, x]) => [k, normalize(x)]));
  return v;
}

export interface CrdControllerOptions extends CustomStoreOptions {
  registry: Registry;
  /** The CustomResourceDefinition Store. */
  crds: Store;
  clock: Clock;
  logger: Logger;
}

export class CrdController {
  private readonly crds = new Map<string, Crd>();
  /** What is served per CRD: the key it was built from and its descriptors. */
  private readonly served = new Map<string, { key: string; descriptors: ResourceDescriptor[]; undo: (() => void)[] }>();
  private readonly cleaning = new Set<string>();
  private markSynced!: () => void;
  /** Resolves once the CRDs that existed at start are served. */
  readonly synced: Promise<void> = new Promise((resolve) => { this.markSynced = resolve; });

  constructor(private readonly o: CrdControllerOptions) {}

  /** Lists and watches CRDs until the signal aborts, relisting after errors. */
  async run(signal: AbortSignal): Promise<void> {
    let delay = 200;
    while (!signal.aborted) {
      try {
        const list = await this.o.crds.list('');
        const names = new Set(list.items.map((c) => c.metadata.name));
        for (const name of [...this.crds.keys()]) if (!names.has(name)) this.forget(name);
        for (const c of list.items) this.crds.set(c.metadata.name, c as Crd);
        for (const c of list.items) await this.sync(c as Crd, signal);
        this.markSynced();
        delay = 200;
        for await (const ev of this.o.crds.watch('', { signal, resourceVersion: list.metadata.resourceVersion! })) {
          if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') { if (ev.type === 'ERROR') break; continue; }
          const crd = ev.object as Crd;
          if (ev.type === 'DELETED') { this.forget(crd.metadata.name); continue; }
          this.crds.set(crd.metadata.name, crd);
          await this.sync(crd, signal);
        }
      } catch (err) {
        if (signal.aborted) break;
        this.o.logger.warn({ err }, 'CustomResourceDefinition watch failed, relisting');
        await this.o.clock.sleep(delay).catch(() => undefined);
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  private forget(name: string): void {
    this.crds.delete(name);
    this.unserve(name);
  }

  private unserve(name: string): void {
    const s = this.served.get(name);
    if (!s) return;
    for (const d of s.descriptors) this.o.registry.remove(d);
    for (const u of s.undo) u();
    this.served.delete(name);
  }

  /** One CRD: its status first, then what is served, then its cleanup when it is being deleted. */
  private async sync(crd: Crd, signal: AbortSignal): Promise<void> {
    const terminating = !!crd.metadata.deletionTimestamp;
    if (!terminating) {
      const status = crdStatusFor(crd, [...this.crds.values()], new Date(this.o.clock.now()));
      if (!sameStatus(crd.status, status)) {
        try {
          const next = { ...structuredClone(crd), status } as KubeObject;
          const { object } = await this.o.crds.update(rc(), '', crd.metadata.name, next, 'status');
          crd = object as Crd;
          this.crds.set(crd.metadata.name, crd);
        } catch (err) {
          // Another apiserver wrote first, or the CRD went: the next event settles it.
          if (!(err instanceof ApiError && (err.reason === 'Conflict' || err.reason === 'NotFound'))) throw err;
          return;
        }
      }
    }
    if (isTrue(crd, 'Established') && crd.status?.acceptedNames?.plural) this.serve(crd, terminating);
    else this.unserve(crd.metadata.name);
    if (terminating && (crd.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER) && !this.cleaning.has(crd.metadata.name)) {
      this.cleaning.add(crd.metadata.name);
      void this.cleanup(crd, signal).finally(() => this.cleaning.delete(crd.metadata.name));
    }
  }

  private serve(crd: Crd, terminating: boolean): void {
    const name = crd.metadata.name;
    const key = JSON.stringify([crd.metadata.generation, crd.metadata.uid, crd.spec, crd.status?.acceptedNames, terminating]);
    const current = this.served.get(name);
    if (current?.key === key) return;
    const entries = customResourceEntries(crd, { storage: this.o.storage, clock: this.o.clock, admission: this.o.admission, terminating });
    const keep = new Set(entries.map((e) => `${e.descriptor.group}/${e.descriptor.version}/${e.descriptor.resource}`));
    for (const d of current?.descriptors ?? []) if (!keep.has(`${d.group}/${d.version}/${d.resource}`)) this.o.registry.remove(d);
    for (const u of current?.undo ?? []) u();
    for (const e of entries) this.o.registry.add(e);
    // Server-side apply merges the versions' keyed lists (x-kubernetes-list-type: map).
    const undo = crd.spec.versions.filter((v) => v.served).map((v) => registerApplySchema(`${crd.spec.group}/${v.name}`, entries[0]!.descriptor.kind, applySchemaOf(v.schema?.openAPIV3Schema)));
    this.served.set(name, { key, descriptors: entries.map((e) => e.descriptor), undo });
  }

  /** Deletes every object of the CRD (all namespaces), waits until they are gone, then drops the finalizer. */
  private async cleanup(crd: Crd, signal: AbortSignal): Promise<void> {
    const name = crd.metadata.name;
    const storageVersion = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
    if (!storageVersion) return;
    // A Store over the objects whether or not the CRD is served now.
    const [entry] = customResourceEntries({ ...crd, spec: { ...crd.spec, versions: [{ ...storageVersion, served: true }] } },
      { storage: this.o.storage, clock: this.o.clock, admission: this.o.admission });
    const store = entry!.store!;
    let delay = 100;
    while (!signal.aborted) {
      try {
        const list = await store.list('');
        if (list.items.length === 0) break;
        for (const obj of list.items) {
          if (obj.metadata.deletionTimestamp) continue;
          try { await store.delete(rc(), obj.metadata.namespace ?? '', obj.metadata.name); } catch (err) {
            if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
          }
        }
        // Objects without finalizers are gone now; only held ones need waiting for.
        if ((await store.list('')).items.length === 0) break;
      } catch (err) {
        this.o.logger.warn({ err, crd: name }, 'Deleting custom objects failed, retrying');
      }
      await this.o.clock.sleep(delay).catch(() => undefined);
      delay = Math.min(delay * 2, 2000);
    }
    if (signal.aborted) return;
    try {
      await this.o.crds.updateWith(rc(), '', name, (current) => {
        if (!current) throw new ApiError('NotFound', `customresourcedefinitions.apiextensions.k8s.io "${name}" not found`);
        const next = structuredClone(current);
        next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
        return next;
      }, 'main', false);
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'NotFound')) this.o.logger.warn({ err, crd: name }, 'Removing the cleanup finalizer failed');
    }
  }
}
