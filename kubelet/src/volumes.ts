/**
 * Volume setup (upstream volume manager, much reduced): every volume is a host directory under
 * `<root-dir>/pods/<uid>/volumes/<plugin>/<name>` bind-mounted by the runtime. ConfigMap, Secret,
 * projected and downward-API contents are rewritten on every pod sync, so a changed object reaches
 * the files within one resync. hostPath is the host's path itself.
 */
import { mkdir, rm, writeFile, rename, readdir, chmod } from 'node:fs/promises';
import { dirname, join, normalize, isAbsolute } from 'node:path';
import type { Pod, Volume, KeyToPath, DownwardAPIVolumeFile } from '@mk8s/api';
import { setupClaimVolume } from './pv-volumes.js';
import type { Mount } from '@mk8s/proto';
import type { ConfigSource } from './env.js';

/**
 * A volume that could not be set up; the pod stays ContainerCreating with a FailedMount event.
 * transient: the state it waits for is expected within moments (a claim the binder is binding,
 * a PV on its way): retried soon, see MountRetry.
 */
export class VolumeError extends Error {
  readonly transient: boolean;
  constructor(message: string, o: { transient?: boolean } = {}) { super(message); this.name = 'VolumeError'; this.transient = o.transient ?? false; }
}

/**
 * When a pod whose volumes failed is synced again, and when its FailedMount event is written.
 * Upstream's volume manager re-reads a pod's claims every 100 ms (desired-state populator) while
 * the pod worker polls the mounts every 300 ms, and it writes FailedMount only after a timeout:
 * a claim whose binding is a few writes from done costs the pod a few hundred ms, not a fixed
 * 5 s, and no event. The kubelet may only GET the claims and PVs of its pods (node authorizer),
 * so this is a poll too, backing off for a claim that stays unbound.
 * Transient errors: retry after initialMs doubling to maxMs; the event once the failure has
 * lasted quietMs, then at most every maxMs. Others: retry after maxMs, event every time.
 * One instance per runtime manager; called by the pod workers (one call at a time per pod).
 */
export class MountRetry {
  private readonly pods = new Map<string, { first: number; failures: number; lastEvent?: number }>();
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly quietMs: number;
  /** @param o.initialMs @default 300 (upstream's mount poll) @param o.maxMs @default 5000 @param o.quietMs @default 2000 */
  constructor(o: { initialMs?: number; maxMs?: number; quietMs?: number } = {}) {
    this.initialMs = o.initialMs ?? 300; this.maxMs = o.maxMs ?? 5_000; this.quietMs = o.quietMs ?? 2_000;
  }

  /** Records a failed setup of uid's volumes at nowMs: when to sync again and whether to write the event now. */
  failed(uid: string, err: VolumeError, nowMs: number): { retryAfterMs: number; event: boolean } {
    const e = this.pods.get(uid) ?? { first: nowMs, failures: 0 };
    this.pods.set(uid, e);
    e.failures++;
    if (!err.transient) { e.lastEvent = nowMs; return { retryAfterMs: this.maxMs, event: true }; }
    const retryAfterMs = Math.min(this.initialMs * 2 ** (e.failures - 1), this.maxMs);
    const event = nowMs - e.first >= this.quietMs && (e.lastEvent === undefined || nowMs - e.lastEvent >= this.maxMs);
    if (event) e.lastEvent = nowMs;
    return { retryAfterMs, event };
  }

  /** The volumes are set up, or the pod is gone. */
  forget(uid: string): void { this.pods.delete(uid); }
}

export const podDir = (rootDir: string, uid: string): string => join(rootDir, 'pods', uid);

/** safeRelative rejects item paths that would leave the volume directory. */
function safeRelative(p: string): string {
  const n = normalize(p);
  if (isAbsolute(n) || n.startsWith('..') || n.includes('/../')) throw new VolumeError(`invalid path ${JSON.stringify(p)}`);
  return n;
}

/** writeFiles replaces dir's contents with files, each written to a temp file then renamed. */
async function writeFiles(dir: string, files: Map<string, { data: Buffer; mode: number }>): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [rel, f] of files) {
    const target = join(dir, safeRelative(rel));
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.mk8s-tmp`;
    await writeFile(tmp, f.data);
    await chmod(tmp, f.mode);
    await rename(tmp, target);
  }
  // Keys removed from the object disappear from the volume.
  const wanted = new Set([...files.keys()].map((k) => safeRelative(k).split('/')[0]));
  for (const name of await readdir(dir)) if (!wanted.has(name)) await rm(join(dir, name), { recursive: true, force: true });
}

function pick(data: Map<string, Buffer>, items: readonly KeyToPath[] | undefined, defaultMode: number, what: string, optional: boolean): Map<string, { data: Buffer; mode: number }> {
  const out = new Map<string, { data: Buffer; mode: number }>();
  if (!items?.length) { for (const [k, v] of data) out.set(k, { data: v, mode: defaultMode }); return out; }
  for (const it of items) {
    const v = data.get(it.key);
    if (v === undefined) { if (optional) continue; throw new VolumeError(`configmap references non-existent config key: ${it.key} (${what})`); }
    out.set(it.path, { data: v, mode: it.mode ?? defaultMode });
  }
  return out;
}

function downwardFiles(pod: Pod, items: readonly DownwardAPIVolumeFile[], defaultMode: number): Map<string, { data: Buffer; mode: number }> {
  const out = new Map<string, { data: Buffer; mode: number }>();
  const m = pod.metadata ?? {};
  const kv = (o: Record<string, string> | undefined) => Object.entries(o ?? {}).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join('\n');
  for (const it of items) {
    const p = it.fieldRef?.fieldPath;
    let v = '';
    if (p === 'metadata.labels') v = kv(m.labels);
    else if (p === 'metadata.annotations') v = kv(m.annotations);
    else if (p === 'metadata.name') v = m.name ?? '';
    else if (p === 'metadata.namespace') v = m.namespace ?? '';
    else if (p === 'metadata.uid') v = m.uid ?? '';
    out.set(it.path, { data: Buffer.from(v), mode: it.mode ?? defaultMode });
  }
  return out;
}

async function configMapData(src: ConfigSource, ns: string, name: string): Promise<Map<string, Buffer> | undefined> {
  const cm = await src.configMap(ns, name);
  if (!cm) return undefined;
  const m = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm.data ?? {})) m.set(k, Buffer.from(v));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) m.set(k, Buffer.from(v, 'base64'));
  return m;
}

async function secretData(src: ConfigSource, ns: string, name: string): Promise<Map<string, Buffer> | undefined> {
  const s = await src.secret(ns, name);
  if (!s) return undefined;
  const m = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(s.data ?? {})) m.set(k, Buffer.from(v, 'base64'));
  for (const [k, v] of Object.entries(s.stringData ?? {})) m.set(k, Buffer.from(v));
  return m;
}

/** setupVolume makes one volume's host directory current and returns its host path. */
export async function setupVolume(rootDir: string, pod: Pod, v: Volume, src: ConfigSource): Promise<string> {
  const uid = pod.metadata?.uid ?? '';
  const ns = pod.metadata?.namespace ?? 'default';
  const base = join(podDir(rootDir, uid), 'volumes');
  if (v.persistentVolumeClaim) return setupClaimVolume(pod, v.persistentVolumeClaim.claimName, src);
  if (v.hostPath) {
    const t = v.hostPath.type ?? '';
    if (t === 'DirectoryOrCreate') await mkdir(v.hostPath.path, { recursive: true });
    return v.hostPath.path;
  }
  if (v.configMap) {
    const dir = join(base, 'kubernetes.io~configmap', v.name);
    const data = await configMapData(src, ns, v.configMap.name ?? '');
    if (!data && !v.configMap.optional) throw new VolumeError(`configmap "${v.configMap.name}" not found`);
    await writeFiles(dir, pick(data ?? new Map(), v.configMap.items, v.configMap.defaultMode ?? 0o644, v.configMap.name ?? '', !!v.configMap.optional));
    return dir;
  }
  if (v.secret) {
    const dir = join(base, 'kubernetes.io~secret', v.name);
    const data = await secretData(src, ns, v.secret.secretName ?? '');
    if (!data && !v.secret.optional) throw new VolumeError(`secret "${v.secret.secretName}" not found`);
    await writeFiles(dir, pick(data ?? new Map(), v.secret.items, v.secret.defaultMode ?? 0o644, v.secret.secretName ?? '', !!v.secret.optional));
    return dir;
  }
  if (v.downwardAPI) {
    const dir = join(base, 'kubernetes.io~downward-api', v.name);
    await writeFiles(dir, downwardFiles(pod, v.downwardAPI.items ?? [], v.downwardAPI.defaultMode ?? 0o644));
    return dir;
  }
  if (v.projected) {
    const dir = join(base, 'kubernetes.io~projected', v.name);
    const mode = v.projected.defaultMode ?? 0o644;
    // The sources' API reads (TokenRequest, ConfigMap, Secret) go out together: on a pod's first
    // sync they are the wait before its sandbox. Files are merged in source order, as before.
    const parts = await settledInOrder((v.projected.sources ?? []).map(async (s): Promise<Map<string, { data: Buffer; mode: number }>> => {
      if (s.configMap) {
        const data = await configMapData(src, ns, s.configMap.name ?? '');
        if (!data && !s.configMap.optional) throw new VolumeError(`configmap "${s.configMap.name}" not found`);
        return pick(data ?? new Map(), s.configMap.items, mode, s.configMap.name ?? '', !!s.configMap.optional);
      }
      if (s.secret) {
        const data = await secretData(src, ns, s.secret.name ?? '');
        if (!data && !s.secret.optional) throw new VolumeError(`secret "${s.secret.name}" not found`);
        return pick(data ?? new Map(), s.secret.items, mode, s.secret.name ?? '', !!s.secret.optional);
      }
      if (s.downwardAPI) return downwardFiles(pod, s.downwardAPI.items ?? [], mode);
      if (s.serviceAccountToken) {
        const p = s.serviceAccountToken;
        let token = '';
        if (src.serviceAccountToken) {
          try {
            token = await src.serviceAccountToken(pod, { expirationSeconds: p.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS, ...(p.audience ? { audience: p.audience } : {}) });
          } catch (err) {
            throw new VolumeError(`failed to fetch token: ${(err as Error).message}`);
          }
        }
        return new Map([[p.path, { data: Buffer.from(token), mode }]]);
      }
      return new Map();
    }));
    const files = new Map<string, { data: Buffer; mode: number }>();
    for (const part of parts) for (const [k, f] of part) files.set(k, f);
    await writeFiles(dir, files);
    return dir;
  }
  // emptyDir and anything unknown: a fresh directory that lives as long as the pod.
  const dir = join(base, 'kubernetes.io~empty-dir', v.name);
  await mkdir(dir, { recursive: true, mode: 0o777 });
  await chmod(dir, 0o777);
  return dir;
}

/** A projected token's lifetime when the pod names none (upstream defaulting). */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

/** The TokenRequest call: POST serviceaccounts/<sa>/token in the pod's namespace; returns the response body. */
export type TokenRequester = (namespace: string, serviceAccount: string, body: unknown) => Promise<unknown>;

/**
 * ServiceAccountTokenManager (upstream kubelet/token.Manager): tokens for projected volumes, bound
 * to the pod (boundObjectRef), cached per pod/audience/lifetime and fetched again once 80% of their
 * life has passed (or after 24 h), so a pod's token file is always fresh. Safe to call
 * concurrently; a failed request rejects and is retried on the next sync.
 */
export class ServiceAccountTokenManager {
  private readonly cache = new Map<string, { token: string; iatMs: number; expMs: number }>();
  constructor(private readonly o: { request: TokenRequester; now: () => number }) {}

  async get(pod: Pod, req: { audience?: string; expirationSeconds: number }): Promise<string> {
    const ns = pod.metadata?.namespace ?? 'default';
    const sa = pod.spec?.serviceAccountName || 'default';
    const uid = pod.metadata?.uid ?? '';
    const key = `${ns}/${sa}/${uid}/${req.audience ?? ''}/${req.expirationSeconds}`;
    const now = this.o.now();
    this.prune(now);
    const hit = this.cache.get(key);
    if (hit && !requiresRefresh(hit, now)) return hit.token;
    const res = await this.o.request(ns, sa, {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
      spec: {
        ...(req.audience ? { audiences: [req.audience] } : {}),
        expirationSeconds: req.expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name ?? '', uid },
      },
    }) as { status?: { token?: string; expirationTimestamp?: string } };
    const token = res.status?.token;
    if (!token) throw new Error('the TokenRequest answer carries no token');
    const expMs = Date.parse(res.status?.expirationTimestamp ?? '') || now + req.expirationSeconds * 1000;
    this.cache.set(key, { token, iatMs: now, expMs });
    return token;
  }

  /** Drops the tokens of a pod that is gone. */
  forget(uid: string): void {
    for (const k of this.cache.keys()) if (k.split('/')[2] === uid) this.cache.delete(k);
  }

  private prune(now: number): void {
    for (const [k, v] of this.cache) if (now >= v.expMs) this.cache.delete(k);
  }
}

const MAX_TOKEN_AGE_MS = 24 * 3600 * 1000;
function requiresRefresh(t: { iatMs: number; expMs: number }, now: number): boolean {
  return now >= t.iatMs + 0.8 * (t.expMs - t.iatMs) || now - t.iatMs > MAX_TOKEN_AGE_MS;
}

/**
 * settledInOrder awaits every promise; when some reject it throws the first rejection in list
 * order (not in time order), so the error a user sees does not depend on which call was slower.
 */
async function settledInOrder<T>(ps: Promise<T>[]): Promise<T[]> {
  const rs = await Promise.allSettled(ps);
  const failed = rs.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return rs.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * setupVolumes prepares every volume of pod, all at once (each one's API reads overlap the
 * others'); returns name → host path. A failure reports the first failing volume in spec order.
 */
export async function setupVolumes(rootDir: string, pod: Pod, src: ConfigSource): Promise<VolumePaths> {
  const vols = pod.spec?.volumes ?? [];
  const paths = await settledInOrder(vols.map((v) => setupVolume(rootDir, pod, v, src)));
  const out: VolumePaths = Object.assign(new Map(vols.map((v, i) => [v.name, paths[i]!])), {
    // A claim mounted readOnly (volumes[].persistentVolumeClaim.readOnly) is read-only in every container.
    readOnly: new Set(vols.filter((v) => v.persistentVolumeClaim?.readOnly).map((v) => v.name)),
  });
  return out;
}

/** Volume name → host path, and the volumes every container gets read-only. */
export type VolumePaths = Map<string, string> & { readonly readOnly?: ReadonlySet<string> };

/** containerMounts maps a container's volumeMounts to CRI mounts (subPath inside the volume dir). */
export function containerMounts(c: { volumeMounts?: readonly { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[] }, volumes: ReadonlyMap<string, string> & { readonly readOnly?: ReadonlySet<string> }): Mount[] {
  const out: Mount[] = [];
  for (const vm of c.volumeMounts ?? []) {
    const host = volumes.get(vm.name);
    if (!host) throw new VolumeError(`volume "${vm.name}" not found`);
    const readonly = vm.readOnly || volumes.readOnly?.has(vm.name);
    out.push({ containerPath: vm.mountPath, hostPath: vm.subPath ? join(host, safeRelative(vm.subPath)) : host, ...(readonly ? { readonly: true } : {}) });
  }
  return out;
}

/** removePodDir deletes the pod's volumes (after its containers are gone). */
export async function removePodDir(rootDir: string, uid: string): Promise<void> {
  await rm(podDir(rootDir, uid), { recursive: true, force: true });
}
