/**
 * The network config list that makes a runtime use mk8s-bridge. libcni runtimes (the shim) use
 * the first config in the conf dir by name, so `10-mk8s.conflist` wins over the shim's own
 * `99-mk8s-bridge.conflist` (reference bridge + host-local) while that stays as a fallback.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatCidr, parseCidr } from './cidr.js';

export const CONFLIST_NAME = '10-mk8s.conflist';
export const NETWORK_NAME = 'mk8s-pod-network';
export const PLUGIN_TYPE = 'mk8s-bridge';

/** Options of {@link renderConflist} / {@link writeConflist}. */
export interface ConflistOptions {
  podCidr: string;
  /** Allocation dir; per node, since nodes share one host in local mode. */
  dataDir: string;
  /** @default 'cni0' */
  bridge?: string;
  /** @default 1500 */
  mtu?: number;
}

/** renderConflist returns the conflist text for a pod CIDR (stable: same input, same bytes). */
export function renderConflist(o: ConflistOptions): string {
  const conf = {
    cniVersion: '1.0.0',
    name: NETWORK_NAME,
    plugins: [{
      type: PLUGIN_TYPE, bridge: o.bridge ?? 'cni0', mtu: o.mtu ?? 1500, hairpinMode: true,
      podCIDR: formatCidr(parseCidr(o.podCidr)), dataDir: o.dataDir,
    }],
  };
  return `${JSON.stringify(conf, null, 2)}\n`;
}

/**
 * writeConflist writes `10-mk8s.conflist` into confDir, atomically (rename) and only when the
 * content changes. Idempotent. Returns whether it wrote.
 */
export async function writeConflist(confDir: string, o: ConflistOptions): Promise<boolean> {
  const text = renderConflist(o);
  const path = join(confDir, CONFLIST_NAME);
  if (existsSync(path) && (await readFile(path, 'utf8').catch(() => '')) === text) return false;
  await mkdir(confDir, { recursive: true });
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
  return true;
}
