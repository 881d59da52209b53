/**
 * Pod volume usage for the Summary (upstream pkg/kubelet/server/stats volume_stat_calculator.go
 * with the volumes' du-based MetricsProvider): the kubelet-managed volumes of a pod (emptyDir,
 * configMap, secret, downwardAPI, projected, under `<root-dir>/pods/<uid>/volumes/<plugin>/<name>`)
 * walked for allocated bytes and inodes, at most every `cacheMs` per directory (upstream computes
 * them in the background every --volume-stats-agg-period, 1 min). hostPath and claim volumes are
 * left out (upstream's hostPath has no metrics; claims are not node-ephemeral here).
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '@mk8s/api';
import { podDir } from './volumes.js';

/** The volume plugins whose directories the kubelet owns, by the Volume field that selects them. */
const PLUGIN_DIRS: [keyof NonNullable<NonNullable<Pod['spec']>['volumes']>[number], string][] = [
  ['emptyDir', 'kubernetes.io~empty-dir'], ['configMap', 'kubernetes.io~configmap'], ['secret', 'kubernetes.io~secret'],
  ['downwardAPI', 'kubernetes.io~downward-api'], ['projected', 'kubernetes.io~projected'],
];

/** du of a directory: allocated bytes and inodes (the directory itself not counted). */
export async function duDir(dir: string, maxEntries = 200_000): Promise<{ bytes: number; inodes: number } | undefined> {
  let bytes = 0; let inodes = 0;
  const stack = [dir];
  let first = true;
  while (stack.length && inodes < maxEntries) {
    const d = stack.pop()!;
    let names: string[];
    try { names = await readdir(d); } catch { if (first) return undefined; continue; }
    first = false;
    const stats = await Promise.all(names.map((n) => lstat(join(d, n)).then((s) => ({ n, s }), () => undefined)));
    for (const x of stats) {
      if (!x) continue;
      inodes++;
      bytes += x.s.blocks * 512;
      if (x.s.isDirectory()) stack.push(join(d, x.n));
    }
  }
  return { bytes, inodes };
}

/** One volume's usage: its name and du. */
export interface VolumeUsage { name: string; usedBytes: number; inodesUsed: number; timeMs: number }

export class VolumeStats {
  private readonly cache = new Map<string, { atMs: number; usage: Promise<VolumeUsage | undefined> }>();

  constructor(private readonly o: { rootDir: string; nowMs: () => number; cacheMs?: number; du?: typeof duDir }) {}

  /** The pod's kubelet-managed volumes that exist on disk; cached walks, safe to call concurrently. */
  async podVolumes(pod: Pod): Promise<VolumeUsage[]> {
    const uid = pod.metadata?.uid ?? '';
    const now = this.o.nowMs();
    const out = await Promise.all((pod.spec?.volumes ?? []).map((v) => {
      const plugin = PLUGIN_DIRS.find(([field]) => v[field] !== undefined)?.[1];
      if (!plugin) return undefined;
      const dir = join(podDir(this.o.rootDir, uid), 'volumes', plugin, v.name);
      let hit = this.cache.get(dir);
      if (!hit || now - hit.atMs >= (this.o.cacheMs ?? 60_000)) {
        hit = { atMs: now, usage: (this.o.du ?? duDir)(dir).then((u) => (u ? { name: v.name, usedBytes: u.bytes, inodesUsed: u.inodes, timeMs: now } : undefined), () => undefined) };
        this.cache.set(dir, hit);
      }
      return hit.usage;
    }));
    return out.filter((x): x is VolumeUsage => x !== undefined);
  }

  /** Forgets the walks of pods not in live (by uid). */
  retain(liveUids: ReadonlySet<string>): void {
    for (const k of this.cache.keys()) {
      const uid = k.slice(join(this.o.rootDir, 'pods').length + 1).split('/')[0] ?? '';
      if (!liveUids.has(uid)) this.cache.delete(k);
    }
  }
}
