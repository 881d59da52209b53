import { Namespaces, type KubeObject } from '@mk8s/api';
import { metaOf, type RestStrategy } from '../../generic/strategy.js';

/** The finalizer the namespace controller removes once the namespace's content is gone. */
export const FINALIZER_KUBERNETES = 'kubernetes';
/** Label every namespace carries (upstream NamespaceDefaultLabelName). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

type Obj = Record<string, unknown>;
const specOf = (ns: KubeObject): Obj => (ns['spec'] ?? {}) as Obj;
const specFinalizers = (ns: KubeObject): string[] => ((specOf(ns)['finalizers'] ?? []) as string[]);

function setNameLabel(ns: KubeObject): void {
  ns.metadata.labels = { ...(ns.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: ns.metadata.name };
}

/**
 * Namespaces: created Active with the `kubernetes` finalizer; DELETE only marks them Terminating
 * and the namespace controller empties them, removes the finalizer through /finalize, and the
 * last finalizer's removal deletes the namespace.
 */
export const namespaceStrategy: RestStrategy = {
  resource: Namespaces,
  tracksGeneration: false,
  returnDeletedObject: true,
  nameIsDNSLabel: true,
  prepareForCreate(ns) {
    ns['status'] = { phase: 'Active' };
    const fins = specFinalizers(ns);
    ns['spec'] = { ...specOf(ns), finalizers: fins.includes(FINALIZER_KUBERNETES) ? fins : [...fins, FINALIZER_KUBERNETES] };
    setNameLabel(ns);
  },
  prepareForUpdate(next, prev) {
    next['spec'] = { ...((next['spec'] ?? {}) as Obj), finalizers: specFinalizers(prev) };
    setNameLabel(next);
  },
  markForDeletion(ns, ctx) {
    const empty = specFinalizers(ns).length === 0 && (ns.metadata.finalizers ?? []).length === 0;
    if (ns.metadata.deletionTimestamp) return empty ? undefined : 'unchanged';
    if (empty) return undefined;
    metaOf(ns).deletionTimestamp = new Date(Math.floor(ctx.now.getTime() / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    metaOf(ns).deletionGracePeriodSeconds = 0;
    ns['status'] = { ...((ns['status'] ?? {}) as Obj), phase: 'Terminating' };
    return ns;
  },
  shouldDeleteDuringUpdate(ns) {
    return !!ns.metadata.deletionTimestamp && specFinalizers(ns).length === 0 && (ns.metadata.finalizers ?? []).length === 0;
  },
};
