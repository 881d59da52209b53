/**
 * persistentVolumeClaim volumes (upstream volume manager's desired-state populator + the hostPath
 * and local plugins): the claim must be Bound to a PV that names it back; the PV's hostPath or
 * local path is then the volume's host directory, bind-mounted by the runtime. A claim that is not
 * Bound yet is a transient VolumeError: the pod stays ContainerCreating and the sync is retried
 * soon (MountRetry; FailedMount once it lasts). A claim being deleted is refused only without its
 * kubernetes.io/pvc-protection finalizer (upstream getPVCExtractPV): a protected claim still
 * serves the pods that use it. fsGroup (pod securityContext) gives the pod's group the directory, as upstream's
 * SetVolumeOwnership with fsGroupChangePolicy OnRootMismatch: files get group fsGroup and g+rw,
 * directories also g+x and setgid; skipped when the root already has that group and setgid.
 */
import { chmod, chown, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PVC_PROTECTION_FINALIZER, type PersistentVolume, type Pod } from '@mk8s/api';
import type { ConfigSource } from './env.js';
import { VolumeError } from './volumes.js';

const LOCAL_PATH_PROVISIONER = 'mk8s.io/local-path';

/** Resolves the claim to its PV's directory (made when the PV says DirectoryOrCreate) and applies fsGroup. */
export async function setupClaimVolume(pod: Pod, claimName: string, src: ConfigSource): Promise<string> {
  const ns = pod.metadata?.namespace ?? 'default';
  const what = `error processing PVC ${ns}/${claimName}`;
  if (!src.persistentVolumeClaim || !src.persistentVolume) throw new VolumeError(`${what}: this kubelet cannot read claims`);
  const transient = { transient: true };
  const claim = await src.persistentVolumeClaim(ns, claimName);
  if (!claim) throw new VolumeError(`${what}: persistentvolumeclaim "${claimName}" not found`, transient);
  if (claim.metadata?.deletionTimestamp && !claim.metadata.finalizers?.includes(PVC_PROTECTION_FINALIZER)) throw new VolumeError(`${what}: PVC is being deleted`);
  const pvName = claim.spec?.volumeName;
  if (claim.status?.phase !== 'Bound') throw new VolumeError(`${what}: PVC is not bound`, transient);
  if (!pvName) throw new VolumeError(`${what}: PVC has empty pvc.Spec.VolumeName`, transient);
  const pv = await src.persistentVolume(pvName);
  if (!pv) throw new VolumeError(`${what}: persistentvolume "${pvName}" not found`, transient);
  const ref = pv.spec?.claimRef;
  if (!ref || ref.name !== claimName || (ref.namespace ?? '') !== ns || (ref.uid && ref.uid !== claim.metadata?.uid)) {
    throw new VolumeError(`${what}: PV ${pvName} is bound to another claim`, transient);
  }
  const dir = await volumeDir(pv);
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  // Upstream's hostPath plugin leaves ownership alone (the path is the admin's), local volumes get
  // it; a provisioned directory is the claim's own, so it gets it too.
  const owned = !pv.spec?.hostPath || pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'] === LOCAL_PATH_PROVISIONER;
  if (fsGroup !== undefined && owned) await setOwnership(dir, fsGroup);
  return dir;
}

/** The host directory of a hostPath or local PV; other sources are not served by this kubelet. */
export async function volumeDir(pv: PersistentVolume): Promise<string> {
  const name = pv.metadata?.name ?? '';
  if (pv.spec?.hostPath) {
    const { path, type } = pv.spec.hostPath;
    if (type === 'DirectoryOrCreate') {
      // A provisioned directory is everyone's to write, as local-path-provisioner's `mkdir -m 0777`;
      // upstream's DirectoryOrCreate for a plain hostPath PV is 0755.
      const mode = pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'] === LOCAL_PATH_PROVISIONER ? 0o777 : 0o755;
      const made = await mkdir(path, { recursive: true, mode });
      if (made !== undefined) await chmod(path, mode);
    } else if (type === 'Directory') {
      const st = await stat(path).catch(() => undefined);
      if (!st?.isDirectory()) throw new VolumeError(`hostPath type check failed: ${path} is not a directory`);
    }
    return path;
  }
  if (pv.spec?.local) {
    const st = await stat(pv.spec.local.path).catch(() => undefined);
    if (!st) throw new VolumeError(`path "${pv.spec.local.path}" does not exist`);
    return pv.spec.local.path;
  }
  throw new VolumeError(`persistentvolume "${name}": only hostPath and local volumes are supported`);
}

/** SetVolumeOwnership (OnRootMismatch). Errors on single files are ignored, as upstream logs them. */
export async function setOwnership(dir: string, gid: number): Promise<void> {
  const root = await stat(dir);
  if (root.gid === gid && (root.mode & 0o2000) !== 0) return;
  const walk = async (p: string): Promise<void> => {
    const st = await lstat(p).catch(() => undefined);
    if (!st || st.isSymbolicLink()) return;
    await chown(p, st.uid, gid).catch(() => undefined);
    const mode = st.mode & 0o7777;
    await chmod(p, st.isDirectory() ? mode | 0o2070 : mode | 0o060).catch(() => undefined);
    if (st.isDirectory()) for (const e of await readdir(p).catch(() => [] as string[])) await walk(join(p, e));
  };
  await walk(dir);
}
