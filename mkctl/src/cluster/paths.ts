import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: $MK8S_ROOT, else found upwards from this file (the folder with Makefile + mkctl/). */
export function repoRoot(): string {
  if (process.env['MK8S_ROOT']) return resolve(process.env['MK8S_ROOT']);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'Makefile')) && existsSync(join(dir, 'mkctl'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

/**
 * Where a local cluster keeps its state: data, logs, pid files, kubeconfigs, the PKI.
 * `kubeconfig` is the admin's; `kubeconfigs` holds one per control-plane component identity
 * (node components' sit in nodes/<node>/).
 */
export interface StatePaths {
  root: string; state: string; logs: string; run: string; etcd: string; nodes: string; kubeconfig: string;
  pki: string; kubeconfigs: string;
  /** The EncryptionConfiguration (AES-GCM key for Secrets): made once, kept with the PKI. */
  encryptionConfig: string;
}

export function statePaths(root = repoRoot()): StatePaths {
  const state = join(root, '.mk8s');
  const pki = join(state, 'pki');
  return {
    root, state, logs: join(state, 'logs'), run: join(state, 'run'), etcd: join(state, 'etcd'), nodes: join(state, 'nodes'), kubeconfig: join(state, 'kubeconfig'),
    pki, kubeconfigs: join(state, 'kubeconfigs'), encryptionConfig: join(pki, 'encryption-config.yaml'),
  };
}
