/** The Linux /proc/<pid>/net/dev table: per-interface counters of the reader's network namespace. */
import type { NetworkInterfaceUsage } from '@mk8s/proto';

/** The pod's default interface (the one CNI adds). */
export const DEFAULT_INTERFACE = 'eth0';

/**
 * parseNetDev reads the Linux /proc/net/dev table: per interface, received bytes and errors
 * (columns 1 and 3 after the name) and transmitted bytes and errors (columns 9 and 11). `lo` and
 * malformed lines are skipped.
 */
export function parseNetDev(text: string): NetworkInterfaceUsage[] {
  const out: NetworkInterfaceUsage[] = [];
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (!name || name === 'lo' || name.includes('|') || f.length < 16 || f.some((n) => !Number.isFinite(n))) continue;
    out.push({ name, rxBytes: { value: f[0]! }, rxErrors: { value: f[2]! }, txBytes: { value: f[8]! }, txErrors: { value: f[10]! } });
  }
  return out;
}
