/**
 * Reads a container's resource usage straight from its cgroup files, as cadvisor does (one read of
 * a few small files per container: far cheaper than Docker's stats API, which reads the same files
 * and then waits for a second sample). cgroup v1 (cpuacct, memory, pids hierarchies) and v2 (one
 * unified tree) are both understood; which one is in use comes from the mounted tree
 * (`cgroup.controllers` at the root means v2). A container's cgroup is found from its process's
 * `/proc/<pid>/cgroup`, so Docker's cgroupfs and systemd drivers and any cgroup parent work alike.
 *
 * Figures (upstream cadvisor / CRI semantics):
 * - CPU: cumulative core-nanoseconds (v1 `cpuacct.usage`; v2 `cpu.stat` usage_usec × 1000).
 * - memory: usage (v1 `memory.usage_in_bytes`, v2 `memory.current`), working set = usage −
 *   inactive_file (v1 `total_inactive_file`), RSS (v1 `total_rss`, v2 `anon`), page faults
 *   (`pgfault`, `pgmajfault`), the limit when one is set (available = limit − working set).
 * - processes: `pids.current`.
 */
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where the cgroup controllers this module reads are mounted. */
export type CgroupLayout =
  | { version: 1; cpuacct: string; memory: string; pids: string | undefined }
  | { version: 2; root: string };

/** A container's cgroup directories, one per controller read (all the same dir on v2). */
export interface CgroupDirs { version: 1 | 2; cpu: string; memory: string; pids: string | undefined }

/** One sample of a cgroup. Counters are cumulative since the cgroup was created. */
export interface CgroupUsage {
  usageCoreNanoSeconds: number;
  memoryUsageBytes: number;
  workingSetBytes: number;
  rssBytes: number;
  pageFaults: number;
  majorPageFaults: number;
  /** The memory limit, undefined when unlimited. */
  memoryLimitBytes: number | undefined;
  /** undefined when the pids controller is not available. */
  processCount: number | undefined;
}

/** A limit this large (v1's "unlimited" is 2^63 rounded to pages) means none. */
const UNLIMITED = 2 ** 62;

const exists = (p: string) => access(p).then(() => true, () => false);

/**
 * detectCgroupLayout looks at the tree mounted at root: v2 when `cgroup.controllers` is there,
 * else v1 with the cpuacct hierarchy under `cpuacct` or `cpu,cpuacct`. Rejects when neither the
 * v2 root nor a v1 memory hierarchy is there (cgroups not mounted).
 */
export async function detectCgroupLayout(root: string): Promise<CgroupLayout> {
  if (await exists(join(root, 'cgroup.controllers'))) return { version: 2, root };
  const memory = join(root, 'memory');
  let cpuacct: string | undefined;
  for (const name of ['cpuacct', 'cpu,cpuacct', 'cpuacct,cpu']) if (!cpuacct && await exists(join(root, name, 'cpuacct.usage'))) cpuacct = join(root, name);
  if (!cpuacct || !await exists(join(memory, 'memory.usage_in_bytes'))) throw new Error(`no cgroup v2 tree nor v1 cpuacct and memory hierarchies under ${root}`);
  const pids = await exists(join(root, 'pids', 'pids.current')) || await exists(join(root, 'pids', 'cgroup.procs')) ? join(root, 'pids') : undefined;
  return { version: 1, cpuacct, memory, pids };
}

/** A parsed /proc/<pid>/cgroup: v1 controller → path, and the v2 (unified, `0::`) path. */
export interface ProcCgroup { v1: Map<string, string>; unified: string | undefined }

/** parseProcCgroup reads `/proc/<pid>/cgroup` lines `id:controllers:path`. */
export function parseProcCgroup(text: string): ProcCgroup {
  const v1 = new Map<string, string>();
  let unified: string | undefined;
  for (const line of text.split('\n')) {
    const a = line.indexOf(':');
    const b = line.indexOf(':', a + 1);
    if (a < 0 || b < 0) continue;
    const controllers = line.slice(a + 1, b);
    const path = line.slice(b + 1);
    if (line.slice(0, a) === '0' && controllers === '') unified = path;
    else for (const c of controllers.split(',')) if (c) v1.set(c, path);
  }
  return { v1, unified };
}

/** cgroupDirs places a process's cgroup paths in the layout; undefined when the process is in none of them. */
export function cgroupDirs(layout: CgroupLayout, proc: ProcCgroup): CgroupDirs | undefined {
  if (layout.version === 2) {
    if (proc.unified === undefined) return undefined;
    const dir = join(layout.root, proc.unified);
    return { version: 2, cpu: dir, memory: dir, pids: dir };
  }
  const cpu = proc.v1.get('cpuacct');
  const memory = proc.v1.get('memory');
  if (cpu === undefined || memory === undefined) return undefined;
  const pids = proc.v1.get('pids');
  return { version: 1, cpu: join(layout.cpuacct, cpu), memory: join(layout.memory, memory), pids: layout.pids && pids !== undefined ? join(layout.pids, pids) : undefined };
}

/** parseFlatKeyed reads a cgroup "key value" file (memory.stat, cpu.stat). */
export function parseFlatKeyed(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp <= 0) continue;
    const v = Number(line.slice(sp + 1));
    if (Number.isFinite(v)) out.set(line.slice(0, sp), v);
  }
  return out;
}

/** Turns the raw file contents of one cgroup into a sample (pure; cadvisor's formulas). */
export function cgroupUsageFromFiles(version: 1 | 2, f: { cpu: string; memoryUsage: string; memoryStat: string; memoryLimit: string; pids: string | undefined }): CgroupUsage {
  const stat = parseFlatKeyed(f.memoryStat);
  const get = (k: string) => stat.get(k) ?? 0;
  const usage = Number(f.memoryUsage.trim()) || 0;
  const limitText = f.memoryLimit.trim();
  const limit = limitText === 'max' ? undefined : Number(limitText);
  const pids = f.pids === undefined ? undefined : Number(f.pids.trim());
  const v1 = version === 1;
  const inactiveFile = v1 ? get('total_inactive_file') : get('inactive_file');
  return {
    usageCoreNanoSeconds: v1 ? Number(f.cpu.trim()) || 0 : (parseFlatKeyed(f.cpu).get('usage_usec') ?? 0) * 1000,
    memoryUsageBytes: usage,
    workingSetBytes: Math.max(0, usage - inactiveFile),
    rssBytes: v1 ? get('total_rss') : get('anon'),
    pageFaults: v1 ? get('total_pgfault') : get('pgfault'),
    majorPageFaults: v1 ? get('total_pgmajfault') : get('pgmajfault'),
    memoryLimitBytes: limit !== undefined && Number.isFinite(limit) && limit > 0 && limit < UNLIMITED ? limit : undefined,
    processCount: pids !== undefined && Number.isFinite(pids) ? pids : undefined,
  };
}

/** readCgroupUsage reads one sample of a cgroup (4–5 small files, in parallel). Rejects when the cgroup is gone. */
export async function readCgroupUsage(d: CgroupDirs): Promise<CgroupUsage> {
  const v1 = d.version === 1;
  const [cpu, memoryUsage, memoryStat, memoryLimit, pids] = await Promise.all([
    readFile(join(d.cpu, v1 ? 'cpuacct.usage' : 'cpu.stat'), 'utf8'),
    readFile(join(d.memory, v1 ? 'memory.usage_in_bytes' : 'memory.current'), 'utf8'),
    readFile(join(d.memory, 'memory.stat'), 'utf8'),
    readFile(join(d.memory, v1 ? 'memory.limit_in_bytes' : 'memory.max'), 'utf8').catch(() => 'max'),
    d.pids ? readFile(join(d.pids, 'pids.current'), 'utf8').catch(() => undefined) : Promise.resolve(undefined),
  ]);
  return cgroupUsageFromFiles(d.version, { cpu, memoryUsage, memoryStat, memoryLimit, pids });
}
