/**
 * The shim reads cgroup files under /sys/fs/cgroup. In local mode it runs under
 * `ip netns exec mk8s-<node>`, which gives it a mount namespace of its own and remounts /sys as
 * the network namespace's sysfs: the cgroup mounts are gone there (an empty /sys/fs/cgroup). The
 * shim then mounts the hierarchies it reads again, in that private mount namespace only (the
 * host's mounts are untouched; they vanish with the shim's process): the same hierarchies the
 * machine uses, so paths from /proc/<pid>/cgroup resolve as on the host. Nothing is done when the
 * directory is populated (compose and VM mode, or a shim on the host).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@mk8s/component-base';
import { parseProcCgroup } from './cgroups.js';

/** The v1 controllers the shim reads. */
const WANTED_V1 = ['cpuacct', 'memory', 'pids'];

/**
 * cgroupMountPlan: the mount commands (argv) that rebuild root from the caller's /proc/self/cgroup:
 * v2 only (a single `0::` line) → the unified tree at root; else a tmpfs at root and each v1
 * hierarchy holding a wanted controller at root/<its controllers> (`cpu,cpuacct` comounted
 * as on the host), plus a `cpuacct` symlink when the name differs. Pure.
 */
export function cgroupMountPlan(procSelfCgroup: string, root: string): string[][] {
  const proc = parseProcCgroup(procSelfCgroup);
  if (proc.v1.size === 0) return proc.unified === undefined ? [] : [['mount', '-t', 'cgroup2', 'cgroup2', root]];
  const plan: string[][] = [['mount', '-t', 'tmpfs', '-o', 'mode=755', 'cgroup_root', root]];
  const hierarchies = new Set<string>();
  for (const line of procSelfCgroup.split('\n')) {
    const controllers = line.split(':')[1] ?? '';
    if (controllers && controllers.split(',').some((c) => WANTED_V1.includes(c))) hierarchies.add(controllers);
  }
  for (const h of [...hierarchies].sort()) {
    const dir = join(root, h);
    plan.push(['mkdir', '-p', dir], ['mount', '-t', 'cgroup', '-o', h, 'cgroup', dir]);
    for (const c of h.split(',')) if (c !== h && WANTED_V1.includes(c)) plan.push(['ln', '-sfn', h, join(root, c)]);
  }
  return plan;
}

/** ensureCgroupMounts runs the plan when root is empty; failures are logged (stats then have no CPU or memory). */
export async function ensureCgroupMounts(o: {
  root: string;
  logger: Logger;
  run: (cmd: string, args: string[]) => Promise<{ code: number }>;
}): Promise<void> {
  const entries = await readdir(o.root).catch(() => undefined);
  if (entries === undefined || entries.length > 0) return;
  const self = await readFile('/proc/self/cgroup', 'utf8').catch(() => '');
  const plan = cgroupMountPlan(self, o.root);
  for (const [cmd, ...args] of plan) {
    const r = await o.run(cmd!, args);
    if (r.code !== 0) { o.logger.warn({ cmd: [cmd, ...args].join(' '), code: r.code }, 'Could not mount cgroups; container stats will lack CPU and memory'); return; }
  }
  if (plan.length) o.logger.info({ root: o.root, hierarchies: plan.filter((c) => c[0] === 'mount').length }, 'Mounted cgroup hierarchies in the shim mount namespace');
}
