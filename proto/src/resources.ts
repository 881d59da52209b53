/**
 * The kubelet's mapping of a container's cpu/memory requests and limits to Linux cgroup settings
 * (pkg/kubelet/cm/helpers_linux.go MilliCPUToShares / MilliCPUToQuota), so the kubelet fills
 * `ContainerConfig.linux.resources` exactly as upstream does. Parse quantities with
 * `parseCpuMillis` / `parseBytes` from @mk8s/api first.
 */
import type { LinuxContainerResources } from './types.js';

export const MIN_SHARES = 2;
export const MAX_SHARES = 262_144;
export const SHARES_PER_CPU = 1024;
export const QUOTA_PERIOD_US = 100_000;
export const MIN_QUOTA_PERIOD_US = 1000;

/** milliCpuToShares: requests.cpu → cpu.shares (2 for none, as for BestEffort pods). */
export function milliCpuToShares(milliCpu: number): number {
  if (milliCpu <= 0) return MIN_SHARES;
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, Math.floor((milliCpu * SHARES_PER_CPU) / 1000)));
}

/** milliCpuToQuota: limits.cpu → CFS quota in µs per period (0 = unlimited). */
export function milliCpuToQuota(milliCpu: number, periodUs = QUOTA_PERIOD_US): number {
  if (milliCpu <= 0) return 0;
  return Math.max(MIN_QUOTA_PERIOD_US, Math.floor((milliCpu * periodUs) / 1000));
}

/** What a container asks for, already parsed (undefined = not set). */
export interface ContainerResourceAmounts {
  cpuRequestMilli?: number | undefined;
  cpuLimitMilli?: number | undefined;
  memoryLimitBytes?: number | undefined;
}

/**
 * linuxContainerResources builds the CRI resources of a container. As in Kubernetes, a missing
 * cpu request falls back to the limit (API defaulting), and no limit means no quota / no memory cap.
 */
export function linuxContainerResources(r: ContainerResourceAmounts): LinuxContainerResources {
  const out: LinuxContainerResources = { cpuShares: milliCpuToShares(r.cpuRequestMilli ?? r.cpuLimitMilli ?? 0) };
  if (r.cpuLimitMilli && r.cpuLimitMilli > 0) {
    out.cpuPeriod = QUOTA_PERIOD_US;
    out.cpuQuota = milliCpuToQuota(r.cpuLimitMilli);
  }
  if (r.memoryLimitBytes && r.memoryLimitBytes > 0) out.memoryLimitInBytes = r.memoryLimitBytes;
  return out;
}
