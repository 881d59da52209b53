/**
 * DaemonSet controller (upstream pkg/controller/daemon): one pod per eligible node. Pods are not
 * bound here: each carries a required node affinity `metadata.name In [node]` (matchFields) and
 * the scheduler binds it, as upstream since 1.12. RollingUpdate (maxUnavailable, maxSurge) and
 * OnDelete; ControllerRevisions via util/history. Watches DaemonSets, Pods, Nodes and
 * ControllerRevisions; writes Pods, ControllerRevisions, DaemonSet status and Events.
 */
import { ControllerRevisions, DaemonSets, isConflict, isNotFound, labelSelectorFromObject, Nodes, Pods, TerminalError, type DaemonSetStatus, type ParsedLabelSelector, type Pod } from '@mk8s/api';
import { controllerOf, newControllerRef, objectKey, splitKey, type SharedInformer } from '@mk8s/client';
import { BaseController, slowStartBatch, type ControllerContext } from '../../controller.js';
import { ControllerExpectations } from '../../util/expectations.js';
import { canonicalJson } from '../../util/hash.js';
import { CONTROLLER_REVISION_HASH_LABEL, RevisionHistory, type RevisionObj } from '../../util/history.js';
import { clone } from '../../util/meta.js';
import { claimObjects } from '../../util/ref-manager.js';
import {
  computeStatus, daemonPodTolerations, pinToNode, planNodes, planRollingUpdate, POD_TEMPLATE_GENERATION_LABEL, targetNodeName,
  templateGeneration, type DSObj, type NodeObj, type PodObj,
} from './util.js';

/** Upstream's BurstReplicas for daemon pods: the most pods one sync creates. */
export const DS_BURST_REPLICAS = 250;

export class DaemonSetController extends BaseController {
  static readonly NAME = 'daemonset';
  readonly name = DaemonSetController.NAME;
  readonly expectations: ControllerExpectations;
  readonly daemonSets: SharedInformer<DSObj>;
  readonly pods: SharedInformer<PodObj>;
  readonly nodes: SharedInformer<NodeObj>;
  readonly revisions: SharedInformer<RevisionObj>;
  private readonly history: RevisionHistory;

  constructor(ctx: ControllerContext) {
    super(ctx, 'daemonset');
    this.expectations = new ControllerExpectations(ctx.clock);
    this.daemonSets = ctx.informers.informerFor<DSObj>(DaemonSets);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.nodes = ctx.informers.informerFor<NodeObj>(Nodes);
    this.revisions = ctx.informers.informerFor<RevisionObj>(ControllerRevisions);
    this.history = new RevisionHistory({ client: (ns) => ctx.client.resource<RevisionObj>(ControllerRevisions, ns), ownerKind: DaemonSets });
    this.daemonSets.addEventHandler({
      onAdd: (ds) => this.enqueue(objectKey(ds)),
      onUpdate: (_, ds) => this.enqueue(objectKey(ds)),
      onDelete: (ds) => { this.expectations.delete(objectKey(ds)); this.enqueue(objectKey(ds)); },
    });
    this.pods.addEventHandler({
      onAdd: (p) => { const k = this.ownerKey(p); if (k) { this.expectations.creationObserved(k); this.enqueue(k); } else if (!controllerOf(p)) this.enqueueMatching(p); },
      onUpdate: (o, p) => {
        const k = this.ownerKey(p) ?? this.ownerKey(o);
        if (k) this.enqueue(k); else if (!controllerOf(p)) this.enqueueMatching(p);
      },
      onDelete: (p) => {
        const ref = controllerOf(p);
        if (ref?.kind !== 'DaemonSet') return;
        const k = `${p.metadata.namespace}/${ref.name}`;
        this.expectations.deletionObserved(k, objectKey(p));
        this.enqueue(k);
      },
    });
    // Any node change may change where daemon pods belong (labels, taints, arrival, removal).
    const allDaemonSets = () => { for (const ds of this.daemonSets.lister.list()) this.enqueue(objectKey(ds)); };
    this.nodes.addEventHandler({
      onAdd: allDaemonSets,
      onUpdate: (o, n) => { if (canonicalJson([o.metadata.labels, o.spec]) !== canonicalJson([n.metadata.labels, n.spec])) allDaemonSets(); },
      onDelete: allDaemonSets,
    });
    this.revisions.addEventHandler({
      onAdd: (r) => this.enqueueRevisionOwner(r), onUpdate: (_, r) => this.enqueueRevisionOwner(r), onDelete: (r) => this.enqueueRevisionOwner(r),
    });
  }

  private ownerKey(p: { metadata: PodObj['metadata'] }): string | undefined {
    const ref = controllerOf(p);
    if (!ref || ref.kind !== 'DaemonSet') return undefined;
    const key = `${p.metadata.namespace}/${ref.name}`;
    const ds = this.daemonSets.lister.get(key);
    return ds && ds.metadata.uid === ref.uid ? key : undefined;
  }

  private enqueueMatching(p: PodObj): void {
    for (const ds of this.daemonSets.lister.list(p.metadata.namespace)) {
      try { if (labelSelectorFromObject(ds.spec?.selector).matches(p.metadata.labels)) this.enqueue(objectKey(ds)); } catch { /* invalid selector: nothing to adopt */ }
    }
  }

  private enqueueRevisionOwner(r: RevisionObj): void {
    const k = this.ownerKey(r as never);
    if (k) this.enqueue(k);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const ds = this.daemonSets.lister.get(key);
    if (!ds) { this.expectations.delete(key); return; }
    let selector: ParsedLabelSelector;
    try { selector = labelSelectorFromObject(ds.spec?.selector); } catch (err) { throw new TerminalError(`invalid selector: ${(err as Error).message}`); }
    if (selector.empty) return;
    // A DaemonSet being deleted keeps its pods until the garbage collector removes them.
    if (ds.metadata.deletionTimestamp) return;
    const { namespace } = splitKey(key);
    const nodes = this.nodes.lister.list();
    const recheckOwner = async () => {
      const fresh = await this.ctx.client.resource<DSObj>(DaemonSets, namespace).get(ds.metadata.name, { signal });
      if (fresh.metadata.uid !== ds.metadata.uid) throw new Error(`original DaemonSet ${key} is gone: got uid ${fresh.metadata.uid}, wanted ${ds.metadata.uid}`);
      if (fresh.metadata.deletionTimestamp) throw new Error(`${key} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
    };
    const ownedRevs = await this.history.claim(ds, this.revisions.lister.list(namespace), recheckOwner, signal);
    const hist = await this.history.construct(ds, ownedRevs, signal);
    const hash = hist.update.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
    const nodeToPods = await this.nodeToDaemonPods(ds, selector, recheckOwner, signal);
    const now = this.ctx.clock.now();

    let syncErr: unknown;
    if (this.expectations.satisfied(key)) {
      try {
        let plan = planNodes(ds, nodes, nodeToPods, hash, now);
        if (plan.create.length === 0 && plan.delete.length === 0 && ds.spec?.updateStrategy?.type === 'RollingUpdate') {
          plan = planRollingUpdate(ds, nodes, nodeToPods, hash, now);
        }
        await this.syncNodes(ds, plan, nodeToPods, hash, signal);
      } catch (err) { syncErr = err; }
      // cleanupHistory: revisions that a live pod or the current template uses stay.
      const live = new Set<string>([hist.update.metadata.name]);
      const liveHashes = new Set<string>();
      for (const pods of nodeToPods.values()) for (const p of pods) { const h = p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]; if (h) liveHashes.add(h); }
      for (const r of hist.old) if (liveHashes.has(r.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '')) live.add(r.metadata.name);
      await this.history.truncate(namespace, hist.old, live, ds.spec?.revisionHistoryLimit ?? 10, signal);
    }
    const status = computeStatus(ds, nodes, nodeToPods, hash, now);
    if (hist.collisionCount !== (ds.status?.collisionCount ?? 0)) status.collisionCount = hist.collisionCount;
    await this.updateStatus(ds, status, signal);
    if (syncErr) throw syncErr;
    const mrs = ds.spec?.minReadySeconds ?? 0;
    if (mrs > 0 && status.numberReady !== status.numberAvailable) return { requeueAfterMs: mrs * 1000 };
  }

  /** getNodesToDaemonPods: claimed pods by the node they run on or are pinned to (terminal pods being deleted left out). */
  private async nodeToDaemonPods(ds: DSObj, selector: ParsedLabelSelector, recheckOwner: () => Promise<void>, signal: AbortSignal): Promise<Map<string, PodObj[]>> {
    const candidates = this.pods.lister.list(ds.metadata.namespace);
    const owned = await claimObjects({ owner: ds, ownerResource: DaemonSets, selector, candidates, client: this.ctx.client.resource<PodObj>(Pods, ds.metadata.namespace), recheckOwner, signal });
    const out = new Map<string, PodObj[]>();
    for (const p of owned) {
      const terminal = p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
      if (terminal && p.metadata.deletionTimestamp) continue;
      const node = targetNodeName(p);
      if (!node) continue;
      const list = out.get(node) ?? [];
      list.push(p);
      out.set(node, list);
    }
    return out;
  }

  /** syncNodes: creates a pod on each node of plan.create (slow start), deletes plan.delete in parallel. */
  private async syncNodes(ds: DSObj, plan: { create: string[]; delete: string[] }, nodeToPods: Map<string, PodObj[]>, hash: string, signal: AbortSignal): Promise<void> {
    if (plan.create.length === 0 && plan.delete.length === 0) return;
    const key = objectKey(ds);
    const create = plan.create.slice(0, DS_BURST_REPLICAS);
    const byName = new Map<string, PodObj>();
    for (const pods of nodeToPods.values()) for (const p of pods) byName.set(p.metadata.name, p);
    const victims = [...new Set(plan.delete)].map((n) => byName.get(n)).filter((p): p is PodObj => !!p);
    this.expectations.expectCreations(key, create.length);
    this.expectations.expectDeletions(key, victims.map(objectKey));
    const podClient = this.ctx.client.resource<PodObj>(Pods, ds.metadata.namespace);
    const errors: unknown[] = [];
    let next = 0;
    const res = await slowStartBatch(create.length, 1, async () => {
      const nodeName = create[next++]!;
      try {
        const created = await podClient.create(this.newPod(ds, nodeName, hash), { signal });
        this.ctx.recorder.event(ds, 'Normal', 'SuccessfulCreate', 'Created pod: %v', created.metadata.name);
      } catch (err) {
        this.expectations.creationObserved(key);
        this.ctx.recorder.event(ds, 'Warning', 'FailedCreate', 'Error creating: %v', (err as Error).message);
        throw err;
      }
    });
    const skipped = create.length - res.successes - (res.error !== undefined ? 1 : 0);
    for (let i = 0; i < skipped; i++) this.expectations.creationObserved(key);
    if (res.error !== undefined) errors.push(res.error);
    await Promise.all(victims.map(async (p) => {
      try {
        await podClient.delete(p.metadata.name, { signal, ...(p.metadata.uid ? { preconditions: { uid: p.metadata.uid } } : {}) });
        this.ctx.recorder.event(ds, 'Normal', 'SuccessfulDelete', 'Deleted pod: %v', p.metadata.name);
      } catch (err) {
        this.expectations.deletionObserved(key, objectKey(p));
        if (isNotFound(err)) return;
        this.ctx.recorder.event(ds, 'Warning', 'FailedDelete', 'Error deleting: %v', (err as Error).message);
        errors.push(err);
      }
    }));
    if (errors.length) throw errors[0];
  }

  /** CreatePodTemplate + ReplaceDaemonSetPodNodeNameNodeAffinity: the pod for one node. */
  newPod(ds: DSObj, nodeName: string, hash: string): PodObj {
    const t = ds.spec?.template;
    const labels: Record<string, string> = { ...(t?.metadata?.labels ?? {}) };
    const gen = templateGeneration(ds);
    if (gen !== undefined) labels[POD_TEMPLATE_GENERATION_LABEL] = String(gen);
    if (hash) labels[CONTROLLER_REVISION_HASH_LABEL] = hash;
    const spec = clone(t?.spec ?? { containers: [] });
    spec.tolerations = daemonPodTolerations(spec);
    const meta: NonNullable<Pod['metadata']> = { generateName: `${ds.metadata.name}-`, namespace: ds.metadata.namespace ?? 'default', labels, ownerReferences: [newControllerRef(ds, DaemonSets)] };
    if (t?.metadata?.annotations) meta.annotations = { ...t.metadata.annotations };
    if (t?.metadata?.finalizers) meta.finalizers = [...t.metadata.finalizers];
    return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec: pinToNode(spec, nodeName) } as PodObj;
  }

  private async updateStatus(ds: DSObj, status: DaemonSetStatus, signal: AbortSignal): Promise<void> {
    if (canonicalJson(ds.status ?? {}) === canonicalJson(status)) return;
    const client = this.ctx.client.resource<DSObj>(DaemonSets, ds.metadata.namespace);
    try {
      await client.updateStatus({ ...clone(ds), status }, { signal });
    } catch (err) {
      if (!isConflict(err)) throw err;
      // One retry on a fresh copy, as upstream's storeDaemonSetStatus.
      const cur = await client.get(ds.metadata.name, { signal });
      if (cur.metadata.uid !== ds.metadata.uid) return;
      await client.updateStatus({ ...cur, status: { ...status, observedGeneration: status.observedGeneration ?? 0 } }, { signal });
    }
  }
}
