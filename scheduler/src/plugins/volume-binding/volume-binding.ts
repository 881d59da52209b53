/**
 * VolumeBinding (kube-scheduler plugins/volumebinding): a pod's persistentVolumeClaim volumes.
 * PreFilter: every claim exists and is not being deleted; an unbound claim of an Immediate class
 * (or of no class) must be bound first. Filter: a bound claim's PV must admit the node (node
 * affinity: local/hostPath volumes pinned to a node); an unbound WaitForFirstConsumer claim needs a
 * static PV that fits on the node, or a provisioner (only on the node already selected for it, if
 * any). Reserve: picks the static PVs for the chosen node. PreBind: writes the decision (PV
 * claimRef for static PVs, volume.kubernetes.io/selected-node on claims to provision) and waits
 * until the PV controller has bound every claim (woken by the claim and volume caches), then lets
 * Bind go.
 */
import {
  ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, claimClass, findMatchingVolume, isConflict, PersistentVolumeClaims, PersistentVolumes,
  type PV, type PVC, type StorageClass,
} from '@mk8s/api';
import { resourceVersionCaughtUp } from '@mk8s/client';
import type { FilterPlugin, Handle, PluginFactory, PreBindPlugin, PreFilterPlugin, ReservePlugin, VolumeListers } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { CycleState, Node, NodeInfo, Pod } from '../../framework/types.js';
import { nodeSelectorMatches } from '../helper/node-selector.js';

export const NAME = 'VolumeBinding';
export const ERR_REASON_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const ERR_REASON_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
/** StorageClasses with this provisioner have no dynamic provisioning (upstream's NotSupportedProvisioner). */
export const NO_PROVISIONER = 'kubernetes.io/no-provisioner';
const STATE_KEY = `PreFilter${NAME}`;
/** How long PreBind waits for the PV controller to bind the claims (bindTimeoutSeconds, default 600). */
export const DEFAULT_BIND_TIMEOUT_MS = 600_000;

export interface PodVolumes {
  /** Claims already bound, with their PVs (undefined when the PV is not in the cache yet). */
  bound: { claim: PVC; pv: PV | undefined }[];
  /** Unbound WaitForFirstConsumer claims with their class. */
  delayed: { claim: PVC; sc: StorageClass | undefined }[];
  /** Set by Reserve: the static PV chosen per delayed claim (claim key → PV), the rest are provisioned. */
  chosen?: Map<string, PV>;
  node?: string;
  /** Set by PreBind: the resourceVersion its own write gave each claim it patched (the caches lag behind it). */
  written?: Map<string, string>;
}

const claimNames = (pod: Pod): string[] =>
  (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : []));
const keyOf = (c: PVC) => `${c.metadata.namespace ?? ''}/${c.metadata.name}`;

/** Whether a PV's required node affinity admits node (no affinity: any node). */
export function volumeFitsNode(pv: PV, node: Node): boolean {
  const req = pv.spec?.nodeAffinity?.required;
  return !req ? true : nodeSelectorMatches(req, node);
}

/** A claim counts as bound once it names its volume (the PV controller finishes the rest). */
const isBound = (c: PVC): boolean => !!c.spec?.volumeName;

/**
 * Sorts a pod's claims (GetPodVolumeClaims). Returns a rejecting Status for a missing claim, one
 * being deleted, or an unbound claim that is not WaitForFirstConsumer.
 */
export function podVolumes(pod: Pod, v: VolumeListers): PodVolumes | Status {
  const out: PodVolumes = { bound: [], delayed: [] };
  const ns = pod.metadata?.namespace ?? 'default';
  for (const name of claimNames(pod)) {
    const claim = v.claim(ns, name);
    if (!claim) return Status.unschedulableAndUnresolvable(`persistentvolumeclaim "${name}" not found`);
    if (claim.metadata.deletionTimestamp) return Status.unschedulableAndUnresolvable(`persistentvolumeclaim "${name}" is being deleted`);
    if (isBound(claim)) { out.bound.push({ claim, pv: v.volume(claim.spec!.volumeName!) }); continue; }
    const cls = claimClass(claim);
    const sc = cls ? v.storageClass(cls) : undefined;
    if (sc?.volumeBindingMode !== 'WaitForFirstConsumer') return Status.unschedulableAndUnresolvable(ERR_REASON_UNBOUND_IMMEDIATE);
    out.delayed.push({ claim, sc });
  }
  return out;
}

/**
 * FindPodVolumes for one node: undefined if the pod's volumes can be had on node, else the reason.
 * taken: PVs already picked for the pod's other claims (one PV serves one claim).
 */
export function checkNode(pv: PodVolumes, node: Node, volumes: readonly PV[]): { reason?: string; chosen: Map<string, PV> } {
  const chosen = new Map<string, PV>();
  for (const b of pv.bound) {
    if (b.pv && !volumeFitsNode(b.pv, node)) return { reason: ERR_REASON_NODE_CONFLICT, chosen };
  }
  const name = node.metadata?.name ?? '';
  for (const d of pv.delayed) {
    const taken = new Set([...chosen.values()].map((x) => x.metadata.name));
    const match = findMatchingVolume(d.claim, volumes.filter((x) => !taken.has(x.metadata.name)), { delayBinding: true, nodeMatches: (x) => volumeFitsNode(x as PV, node) });
    if (match) { chosen.set(keyOf(d.claim), match); continue; }
    // Provisioning: a provisioner must exist, and a claim already handed to a node stays there.
    const selected = d.claim.metadata.annotations?.[ANN_SELECTED_NODE];
    if (!d.sc || d.sc.provisioner === NO_PROVISIONER || (selected && selected !== name)) return { reason: ERR_REASON_BIND_CONFLICT, chosen };
  }
  return { chosen };
}

export class VolumeBinding implements PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin {
  readonly name = NAME;
  constructor(private readonly handle: Handle, private readonly bindTimeoutMs = DEFAULT_BIND_TIMEOUT_MS) {}

  preFilter(state: CycleState, pod: Pod): Status | undefined {
    if (claimNames(pod).length === 0) return Status.skip();
    const v = this.handle.volumes;
    if (!v) return Status.skip();
    const r = podVolumes(pod, v);
    if (r instanceof Status) return r;
    state.write(STATE_KEY, r);
    return undefined;
  }

  filter(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const pv = state.read<PodVolumes>(STATE_KEY);
    if (!pv || !nodeInfo.node || !this.handle.volumes) return undefined;
    const r = checkNode(pv, nodeInfo.node, pv.delayed.length ? this.handle.volumes.volumes() : []);
    return r.reason ? Status.unschedulableAndUnresolvable(r.reason) : undefined;
  }

  reserve(state: CycleState, _pod: Pod, nodeName: string): Status | undefined {
    const pv = state.read<PodVolumes>(STATE_KEY);
    if (!pv || !this.handle.volumes) return undefined;
    const node = state.snapshot.get(nodeName)?.node;
    if (!node) return undefined;
    const r = checkNode(pv, node, pv.delayed.length ? this.handle.volumes.volumes() : []);
    if (r.reason) return Status.unschedulable(r.reason);
    pv.chosen = r.chosen;
    pv.node = nodeName;
    return undefined;
  }

  unreserve(state: CycleState): void {
    const pv = state.read<PodVolumes>(STATE_KEY);
    if (pv) { delete pv.chosen; delete pv.node; }
  }

  async preBind(state: CycleState, pod: Pod, nodeName: string, signal: AbortSignal): Promise<Status | undefined> {
    const pv = state.read<PodVolumes>(STATE_KEY);
    const client = this.handle.client;
    if (!pv || pv.delayed.length === 0 || !client || !this.handle.volumes) return undefined;
    const ns = pod.metadata?.namespace ?? 'default';
    try {
      for (const d of pv.delayed) {
        const chosen = pv.chosen?.get(keyOf(d.claim));
        if (chosen) {
          // Static PV: claim it for this claim; the PV controller completes the binding.
          const next = structuredClone(chosen);
          next.spec = { ...(next.spec ?? {}), claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: ns, name: d.claim.metadata.name, uid: d.claim.metadata.uid ?? '' } };
          next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [ANN_BOUND_BY_CONTROLLER]: 'yes' };
          await client.resource(PersistentVolumes).update(next as never, { signal });
        } else if (d.claim.metadata.annotations?.[ANN_SELECTED_NODE] !== nodeName) {
          const made = await client.resource(PersistentVolumeClaims, ns).patch(d.claim.metadata.name, 'merge', { metadata: { annotations: { [ANN_SELECTED_NODE]: nodeName } } }, { signal });
          (pv.written ??= new Map()).set(keyOf(d.claim), made.metadata.resourceVersion ?? '');
        }
      }
    } catch (err) {
      return isConflict(err) ? Status.unschedulable('failed to bind volumes: the object has been modified') : Status.error(err);
    }
    // Wait for the PV controller (and the provisioner) to bind every claim, woken by the caches.
    return this.waitForBindings(pv, ns, nodeName, signal);
  }

  /**
   * checkBindings until every delayed claim is fully bound (upstream isPVCFullyBound: volumeName
   * and bind-completed, the binder's last spec write; its status write may still be on its way, and
   * the kubelet waits for that one). Fails when a claim went, was re-created, or lost its selected
   * node meanwhile.
   */
  private async waitForBindings(pv: PodVolumes, ns: string, nodeName: string, signal: AbortSignal): Promise<Status | undefined> {
    const v = this.handle.volumes!;
    const deadline = this.handle.clock.now() + this.bindTimeoutMs;
    let wake: (() => void) | undefined;
    const unsubscribe = v.onChange?.(() => wake?.());
    try {
      for (;;) {
        const r = bindingsDone(pv, ns, nodeName, v);
        if (r instanceof Status) return r;
        if (r) return undefined;
        if (signal.aborted) return Status.error(signal.reason);
        const left = deadline - this.handle.clock.now();
        if (left <= 0) return Status.error(new Error('binding volumes: context deadline exceeded'));
        // A change in the caches wakes this at once; the timer is the fallback for listers without onChange.
        const ac = new AbortController();
        const onAbort = () => ac.abort();
        signal.addEventListener('abort', onAbort, { once: true });
        wake = () => ac.abort();
        await this.handle.clock.sleep(Math.min(left, v.onChange ? 1000 : 50), ac.signal).catch(() => undefined);
        signal.removeEventListener('abort', onAbort);
        wake = undefined;
      }
    } finally {
      unsubscribe?.();
    }
  }
}

/** checkBindings for one look at the caches: true when all delayed claims are fully bound, a Status when binding failed. */
export function bindingsDone(pv: PodVolumes, ns: string, nodeName: string, v: VolumeListers): boolean | Status {
  for (const d of pv.delayed) {
    const claim = v.claim(ns, d.claim.metadata.name);
    if (!claim) return Status.unschedulable(`persistentvolumeclaim "${d.claim.metadata.name}" not found`);
    if (claim.metadata.uid !== d.claim.metadata.uid) return Status.unschedulable(`persistentvolumeclaim "${d.claim.metadata.name}" was recreated`);
    const volumeName = claim.spec?.volumeName;
    if (!volumeName) {
      // Still to provision: the scheduler's choice must still be on the claim (once the cache has
      // caught up with the write that put it there: upstream assumes its write into the cache).
      const written = pv.written?.get(keyOf(d.claim));
      if (written && !resourceVersionCaughtUp(claim.metadata.resourceVersion, written)) return false;
      if (!pv.chosen?.has(keyOf(d.claim)) && claim.metadata.annotations?.[ANN_SELECTED_NODE] !== nodeName) {
        return Status.unschedulable(`selectedNode annotation reset for PVC "${claim.metadata.name}"`);
      }
      return false;
    }
    if (claim.metadata.annotations?.[ANN_BIND_COMPLETED] === undefined) return false;
  }
  return true;
}

export const create: PluginFactory = (args, handle) =>
  new VolumeBinding(handle, typeof args?.['bindTimeoutSeconds'] === 'number' ? args['bindTimeoutSeconds'] * 1000 : DEFAULT_BIND_TIMEOUT_MS);
