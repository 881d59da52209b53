/**
 * The node's own processes: in local mode a node is a network namespace on a shared machine, with
 * no cgroup of its own, so the kubelet finds the node's processes as those sharing its network
 * namespace (kubelet, CRI shim, kube-proxy; pods have namespaces of their own) and reads each
 * one's CPU time and resident memory from /proc, the figures cadvisor's per-process stats use.
 * The membership scan (a readlink per process on the machine) is redone at most every
 * `rescanMs`; the per-process reads happen on every sample.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** What a node process is, as the Summary's system containers name them. */
export type SystemContainerName = 'kubelet' | 'runtime' | 'misc';

/** One sample of one process. */
export interface ProcessSample {
  /** `<pid>:<starttime>`: unique across pid reuse. */
  key: string;
  pid: number;
  role: SystemContainerName;
  /** utime + stime + cutime + cstime, in ns. */
  cpuNs: number;
  rssBytes: number;
  /** Process start, ms since the epoch. */
  startTimeMs: number;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux the kernel ABI allows). */
const USER_HZ = 100;
const PAGE_SIZE = 4096;

/**
 * parseProcStat reads /proc/<pid>/stat: utime, stime, cutime, cstime (fields 14–17, clock ticks)
 * and starttime (field 22, ticks since boot). The command name (field 2) may hold spaces and
 * parentheses: fields are counted after its last ')'.
 */
export function parseProcStat(text: string): { cpuTicks: number; startTicks: number } | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = text.slice(close + 2).trim().split(/\s+/);
  // f[0] is field 3 (state): field n is f[n - 3].
  const n = (i: number) => Number(f[i - 3]);
  const cpuTicks = n(14) + n(15) + n(16) + n(17);
  const startTicks = n(22);
  return Number.isFinite(cpuTicks) && Number.isFinite(startTicks) ? { cpuTicks, startTicks } : undefined;
}

/** bootTimeMs reads `btime` (seconds since the epoch) from /proc/stat. */
export function parseBootTimeMs(procStat: string): number {
  const m = /^btime\s+(\d+)$/m.exec(procStat);
  return m ? Number(m[1]) * 1000 : 0;
}

/** Role of a process from its command line: the CRI shim is the runtime; the kubelet is self. */
export function processRole(pid: number, selfPid: number, cmdline: string): SystemContainerName {
  if (pid === selfPid) return 'kubelet';
  return /cri-docker|dockerd|containerd/.test(cmdline) ? 'runtime' : 'misc';
}

export interface NodeProcessesOptions {
  /** @default '/proc' */
  procRoot?: string;
  /** @default process.pid */
  selfPid?: number;
  /** @default Date.now */
  nowMs?: () => number;
  /** @default 10000 */
  rescanMs?: number;
}

export class NodeProcesses {
  private readonly procRoot: string;
  private readonly selfPid: number;
  private readonly nowMs: () => number;
  private readonly rescanMs: number;
  private members: { pid: number; role: SystemContainerName }[] | undefined;
  private scannedAtMs = -Infinity;
  private bootMs: number | undefined;

  constructor(o: NodeProcessesOptions = {}) {
    this.procRoot = o.procRoot ?? '/proc';
    this.selfPid = o.selfPid ?? process.pid;
    this.nowMs = o.nowMs ?? Date.now;
    this.rescanMs = o.rescanMs ?? 10_000;
  }

  /** The pids in the kubelet's network namespace (itself included), rescanned at most every rescanMs. */
  private async scan(): Promise<{ pid: number; role: SystemContainerName }[]> {
    if (this.members && this.nowMs() - this.scannedAtMs < this.rescanMs) return this.members;
    const self = await readlink(join(this.procRoot, String(this.selfPid), 'ns', 'net')).catch(() => undefined);
    const pids = (await readdir(this.procRoot).catch(() => [] as string[])).filter((p) => /^\d+$/.test(p)).map(Number);
    const found = await Promise.all(pids.map(async (pid) => {
      if (pid !== this.selfPid) {
        const ns = await readlink(join(this.procRoot, String(pid), 'ns', 'net')).catch(() => undefined);
        if (!self || ns !== self) return undefined;
      }
      const cmd = await readFile(join(this.procRoot, String(pid), 'cmdline'), 'utf8').catch(() => '');
      if (!cmd) return undefined;                               // kernel thread or gone
      return { pid, role: processRole(pid, this.selfPid, cmd.replace(/\0/g, ' ')) };
    }));
    this.members = found.filter((x): x is { pid: number; role: SystemContainerName } => x !== undefined);
    this.scannedAtMs = this.nowMs();
    return this.members;
  }

  /** One sample of every node process; processes gone since the scan are left out. */
  async sample(): Promise<ProcessSample[]> {
    this.bootMs ??= parseBootTimeMs(await readFile(join(this.procRoot, 'stat'), 'utf8').catch(() => ''));
    const members = await this.scan();
    const out = await Promise.all(members.map(async ({ pid, role }): Promise<ProcessSample | undefined> => {
      try {
        const [stat, statm] = await Promise.all([readFile(join(this.procRoot, String(pid), 'stat'), 'utf8'), readFile(join(this.procRoot, String(pid), 'statm'), 'utf8')]);
        const s = parseProcStat(stat);
        if (!s) return undefined;
        const rssPages = Number(statm.trim().split(/\s+/)[1]);
        return {
          key: `${pid}:${s.startTicks}`, pid, role,
          cpuNs: (s.cpuTicks / USER_HZ) * 1e9,
          rssBytes: Number.isFinite(rssPages) ? rssPages * PAGE_SIZE : 0,
          startTimeMs: (this.bootMs ?? 0) + (s.startTicks / USER_HZ) * 1000,
        };
      } catch {
        this.members = undefined;                                // a member is gone: rescan next time
        return undefined;
      }
    }));
    return out.filter((x): x is ProcessSample => x !== undefined);
  }
}
