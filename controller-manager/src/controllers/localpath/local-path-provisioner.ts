/**
 * The local-path provisioner (in the spirit of rancher/local-path-provisioner, k3s' default):
 * provisions claims of classes whose provisioner is mk8s.io/local-path as hostPath directories on
 * the node the scheduler chose (volume.kubernetes.io/selected-node), pinned there by node
 * affinity; deletes Released volumes with reclaimPolicy Delete by running a helper pod on their
 * node that removes the directory, then deleting the PV; records a grown request (expansion) as
 * the PV's capacity. See README.md for why it runs here and not on the nodes.
 * Watches PVCs, PVs, StorageClasses, Nodes, Pods (its helpers) and ConfigMap
 * kube-system/local-path-config. Writes PVs, helper Pods in kube-system and Events.
 * Keys: `claim:<ns>/<name>` and `volume:<name>`.
 */
import {
  ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, ConfigMaps, isAlreadyExists, isNotFound, Nodes, PersistentVolumeClaims, PersistentVolumes, Pods, StorageClasses,
  type ConfigMap, type Node, type PersistentVolume, type PersistentVolumeClaim, type Pod, type StorageClass,
} from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import type { Obj } from '../../util/meta.js';
import {
  ANN_PROVISIONED_NODE, basePathFor, MAX_HELPER_PODS, buildVolume, CONFIG_MAP_NAME, CONFIG_NAMESPACE, helperPod, helperPodName, parseConfig, provisionBlocker,
  PROVISIONER_NAME, volumeAction, volumeNameFor,
} from './decisions.js';

type Claim = Obj<PersistentVolumeClaim>;
type Volume = Obj<PersistentVolume>;

export class LocalPathProvisioner extends BaseController {
  static readonly NAME = 'local-path-provisioner';
  readonly name = LocalPathProvisioner.NAME;
  readonly claims: SharedInformer<Claim>;
  readonly volumes: SharedInformer<Volume>;
  readonly classes: SharedInformer<Obj<StorageClass>>;
  readonly nodes: SharedInformer<Obj<Node>>;
  readonly pods: SharedInformer<Obj<Pod>>;
  readonly configMaps: SharedInformer<Obj<ConfigMap>>;
  /**
   * At most this many helper pods at a time (rancher/local-path-provisioner runs a helper inside
   * each of its 4 worker threads): deleting 100 volumes at once must not start 100 pods at once.
   */
  readonly maxHelperPods: number;
  /** Helper pods this controller created and has not deleted yet (the pod cache lags its creates). */
  private readonly helpers = new Set<string>();
  /** Volumes waiting for a helper slot; a helper pod that goes wakes them. */
  private readonly waitingForHelper = new Set<string>();

  constructor(ctx: ControllerContext, o: { maxHelperPods?: number } = {}) {
    super(ctx, 'local-path-provisioner');
    this.maxHelperPods = o.maxHelperPods ?? MAX_HELPER_PODS;
    this.claims = ctx.informers.informerFor<Claim>(PersistentVolumeClaims);
    this.volumes = ctx.informers.informerFor<Volume>(PersistentVolumes);
    this.classes = ctx.informers.informerFor<Obj<StorageClass>>(StorageClasses);
    this.nodes = ctx.informers.informerFor<Obj<Node>>(Nodes);
    this.pods = ctx.informers.informerFor<Obj<Pod>>(Pods);
    this.configMaps = ctx.informers.informerFor<Obj<ConfigMap>>(ConfigMaps);
    const onClaim = (c: Claim) => {
      if (c.metadata.annotations?.[ANN_STORAGE_PROVISIONER] === PROVISIONER_NAME || c.spec?.volumeName) {
        this.enqueue(`claim:${c.metadata.namespace}/${c.metadata.name}`);
        if (c.spec?.volumeName) this.enqueue(`volume:${c.spec.volumeName}`);
      }
    };
    this.claims.addEventHandler({ onAdd: onClaim, onUpdate: (_, c) => onClaim(c) });
    const onVolume = (v: Volume) => { this.enqueue(`volume:${v.metadata.name}`); };
    this.volumes.addEventHandler({ onAdd: onVolume, onUpdate: (_, v) => onVolume(v) });
    // A helper pod that finished wakes its volume.
    const onHelper = (p: Obj<Pod>) => { const v = p.metadata.labels?.['mk8s.io/volume']; if (v && p.metadata.namespace === CONFIG_NAMESPACE) this.enqueue(`volume:${v}`); };
    this.pods.addEventHandler({
      onAdd: onHelper,
      onUpdate: (_, p) => onHelper(p),
      // A helper gone frees a slot.
      onDelete: (p) => {
        if (p.metadata.namespace !== CONFIG_NAMESPACE || !p.metadata.labels?.['mk8s.io/volume']) return;
        this.helpers.delete(p.metadata.name);
        for (const v of this.waitingForHelper) this.enqueue(`volume:${v}`);
        this.waitingForHelper.clear();
      },
    });
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    if (key.startsWith('claim:')) return this.syncClaim(key.slice(6), signal);
    if (key.startsWith('volume:')) return this.syncVolume(key.slice(7), signal);
  }

  private async syncClaim(key: string, signal: AbortSignal): Promise<void> {
    const claim = this.claims.lister.get(key);
    if (!claim || claim.metadata.annotations?.[ANN_STORAGE_PROVISIONER] !== PROVISIONER_NAME) return;
    const sc = this.classes.lister.get(claim.spec?.storageClassName ?? '');
    const blocker = provisionBlocker(claim, sc);
    if (blocker === 'no node selected' && sc?.volumeBindingMode !== 'WaitForFirstConsumer') {
      this.ctx.recorder.event(claim, 'Warning', 'ProvisioningFailed', 'failed to provision volume with StorageClass "%s": configuration error, no node was specified (local-path volumes need volumeBindingMode WaitForFirstConsumer)', sc?.metadata.name ?? '');
      return;
    }
    if (blocker || !sc) return;
    const pvName = volumeNameFor(claim);
    if (this.volumes.lister.get(pvName)) return; // made already; the binder binds it
    const node = claim.metadata.annotations![ANN_SELECTED_NODE]!;
    const fail = (why: string) => this.ctx.recorder.event(claim, 'Warning', 'ProvisioningFailed', 'failed to provision volume with StorageClass "%s": %s', sc.metadata.name, why);
    let base: string | undefined;
    try {
      base = basePathFor(parseConfig(this.configMaps.lister.get(`${CONFIG_NAMESPACE}/${CONFIG_MAP_NAME}`)?.data?.['config.json']), node);
    } catch (err) { fail((err as Error).message); throw err; }
    if (!base) { fail(`no path configured for node ${node}`); return; }
    const hostname = this.nodes.lister.get(node)?.metadata.labels?.['kubernetes.io/hostname'] ?? node;
    this.ctx.recorder.event(claim, 'Normal', 'Provisioning', 'External provisioner is provisioning volume for claim "%s"', key);
    const pv = buildVolume({ claim, sc, node, hostname, base });
    try {
      await this.ctx.client.resource<Volume>(PersistentVolumes).create(pv as Volume, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) { fail((err as Error).message); throw err; }
    }
    this.ctx.recorder.event(claim, 'Normal', 'ProvisioningSucceeded', 'Successfully provisioned volume %s', pvName);
    this.log.info({ claim: key, volume: pvName, node, path: pv.spec?.hostPath?.path }, 'Provisioned volume');
  }

  private async syncVolume(name: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const pv = this.volumes.lister.get(name);
    if (!pv) return;
    const ref = pv.spec?.claimRef;
    const claim = ref?.name ? this.claims.lister.get(`${ref.namespace ?? ''}/${ref.name}`) : undefined;
    const pvs = this.ctx.client.resource<Volume>(PersistentVolumes);
    switch (volumeAction(pv, claim)) {
      case 'none': return;
      case 'expand': {
        // Recorded, not enforced: a hostPath directory has no size limit.
        const next = structuredClone(pv);
        next.spec = { ...(next.spec ?? {}), capacity: { ...(next.spec?.capacity ?? {}), storage: claim!.spec!.resources!.requests!['storage']! } };
        await pvs.update(next, { signal });
        this.log.info({ volume: name, size: claim!.spec!.resources!.requests!['storage'] }, 'Recorded expanded volume size');
        return;
      }
      case 'delete': return this.deleteVolume(pv, signal);
    }
  }

  /** Runs the helper pod on the volume's node until it succeeds, then deletes the PV. */
  private async deleteVolume(pv: Volume, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const node = pv.metadata.annotations?.[ANN_PROVISIONED_NODE];
    const pvs = this.ctx.client.resource<Volume>(PersistentVolumes);
    const pods = this.ctx.client.resource<Obj<Pod>>(Pods, CONFIG_NAMESPACE);
    if (!node) {
      await pvs.delete(pv.metadata.name, { signal }).catch((e: unknown) => { if (!isNotFound(e)) throw e; });
      return;
    }
    const podName = helperPodName(pv.metadata.name);
    const helper = this.pods.lister.get(`${CONFIG_NAMESPACE}/${podName}`);
    if (!helper && !this.helpers.has(podName)) {
      const running = new Set([...this.helpers, ...this.pods.lister.list(CONFIG_NAMESPACE).filter((p) => p.metadata.labels?.['mk8s.io/volume']).map((p) => p.metadata.name)]);
      if (running.size >= this.maxHelperPods) {
        this.waitingForHelper.add(pv.metadata.name);
        return { requeueAfterMs: 10_000 }; // woken earlier by a helper pod that goes
      }
      this.helpers.add(podName);
      try { await pods.create(helperPod(pv, node) as Obj<Pod>, { signal }); } catch (err) { if (!isAlreadyExists(err)) { this.helpers.delete(podName); throw err; } }
      return { requeueAfterMs: 5_000 };
    }
    if (!helper) return { requeueAfterMs: 5_000 }; // created, not in the cache yet: its add brings this key back
    const phase = helper.status?.phase;
    if (phase === 'Failed') {
      this.ctx.recorder.event(pv, 'Warning', 'VolumeFailedDelete', 'helper pod %s failed to remove the directory on node %s', podName, node);
      await pods.delete(podName, { signal }).catch((e: unknown) => { if (!isNotFound(e)) throw e; });
      this.helpers.delete(podName);
      // An error, not a fixed requeue: the queue's per-key exponential back-off spaces the next
      // helpers out (a directory that cannot be removed must not cost a pod and an Event every 10 s).
      throw new Error(`helper pod ${podName} failed to remove the directory of ${pv.metadata.name} on node ${node}`);
    }
    if (phase !== 'Succeeded') return { requeueAfterMs: 5_000 };
    await pods.delete(podName, { signal }).catch((e: unknown) => { if (!isNotFound(e)) throw e; });
    this.helpers.delete(podName);
    await pvs.delete(pv.metadata.name, { signal }).catch((e: unknown) => { if (!isNotFound(e)) throw e; });
    this.log.info({ volume: pv.metadata.name, node, path: pv.spec?.hostPath?.path }, 'Deleted volume and its directory');
  }
}
