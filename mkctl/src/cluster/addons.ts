/**
 * Add-ons: workloads the cluster runs for itself (upstream kubeadm's CoreDNS), applied by
 * `cluster up` through the apiserver as any user's manifests are, then waited for. Idempotent:
 * an object that exists is updated in place (allocated fields kept), a missing one created.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { isNotFound, lookupKind, type KubeObject } from '@mk8s/api';
import { createClientset, type Clientset } from '@mk8s/client';

/** Manifest files, relative to the repository root, in the order applied. */
export const ADDON_MANIFESTS: readonly string[] = ['cluster-dns/manifests/cluster-dns.yaml'];
/** Deployments `cluster up` waits for (namespace/name). */
export const ADDON_DEPLOYMENTS: readonly string[] = ['kube-system/coredns'];

/** The YAML documents of a manifest file. */
export function readManifests(file: string): KubeObject[] {
  return yaml.loadAll(readFileSync(file, 'utf8')).filter((d): d is KubeObject => !!d && typeof d === 'object');
}

/** Creates or updates obj; Services keep their allocated clusterIP(s) and nodePorts. */
export async function applyObject(client: Clientset, obj: KubeObject): Promise<'created' | 'configured'> {
  const r = lookupKind(obj.apiVersion ?? '', obj.kind ?? '');
  if (!r) throw new Error(`no served resource for ${obj.apiVersion} ${obj.kind}`);
  const rc = client.resource<KubeObject>(r, r.namespaced ? obj.metadata.namespace ?? 'default' : undefined);
  let cur: KubeObject | undefined;
  try { cur = await rc.get(obj.metadata.name ?? ''); } catch (err) { if (!isNotFound(err)) throw err; }
  if (!cur) { await rc.create(obj); return 'created'; }
  const next = structuredClone(obj);
  if (cur.metadata.resourceVersion) next.metadata.resourceVersion = cur.metadata.resourceVersion;
  if (obj.kind === 'Service') {
    const spec = (next['spec'] ?? {}) as Record<string, unknown>;
    const was = (cur['spec'] ?? {}) as Record<string, unknown>;
    for (const f of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) if (spec[f] === undefined && was[f] !== undefined) spec[f] = was[f];
  }
  await rc.update(next);
  return 'configured';
}

export interface AddonOptions {
  root: string;
  /** The admin's kubeconfig (the local cluster's, or the compose cluster's addons credentials). */
  kubeconfig: string;
  out: (l: string) => void;
  timeoutMs: number;
}

/** Applies every add-on manifest and waits until each add-on Deployment has all replicas available. */
export async function ensureAddons(o: AddonOptions): Promise<void> {
  const client = createClientset({ kubeconfig: o.kubeconfig, userAgent: 'mkctl-addons' });
  try {
    const started = Date.now();
    for (const f of ADDON_MANIFESTS) for (const obj of readManifests(join(o.root, f))) await applyObject(client, obj);
    const r = lookupKind('apps/v1', 'Deployment')!;
    await Promise.all(ADDON_DEPLOYMENTS.map(async (key) => {
      const [ns = '', name = ''] = key.split('/');
      const deadline = Date.now() + o.timeoutMs;
      for (;;) {
        const d = await client.resource<KubeObject>(r, ns).get(name).catch(() => undefined);
        const want = (d?.['spec'] as { replicas?: number } | undefined)?.replicas ?? 1;
        const st = (d?.['status'] ?? {}) as { availableReplicas?: number; observedGeneration?: number };
        if (d && (st.availableReplicas ?? 0) >= want && (st.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)) break;
        if (Date.now() > deadline) throw new Error(`add-on ${key}: ${st.availableReplicas ?? 0}/${want} replicas available after ${o.timeoutMs / 1000}s (kubectl -n ${ns} describe deployment ${name})`);
        await new Promise((res) => setTimeout(res, 250));
      }
      o.out(`  ✓ ${`${name} (${ns})`.padEnd(24)} ready (${((Date.now() - started) / 1000).toFixed(1)}s)`);
    }));
  } finally {
    await client.close();
  }
}
