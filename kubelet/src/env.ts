/**
 * Container environment (upstream kubelet `makeEnvironmentVariables`): envFrom first, then env in
 * order, each value with $(VAR) expanded from the variables defined before it. A missing
 * ConfigMap/Secret (or key) that is not optional is a CreateContainerConfigError.
 */
import type { ConfigMap, Container, PersistentVolume, PersistentVolumeClaim, Pod, Secret } from '@mk8s/api';
import type { KeyValue } from '@mk8s/proto';

/** Reads ConfigMaps and Secrets of the pod's namespace; undefined when absent. */
export interface ConfigSource {
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
  /**
   * A token for the pod's ServiceAccount (projected serviceAccountToken volumes; volumes.ts
   * ServiceAccountTokenManager: cached, refreshed at 80% of its life). Rejects when the apiserver
   * refuses. Absent: the volume gets an empty token file.
   */
  serviceAccountToken?(pod: Pod, req: { audience?: string; expirationSeconds: number }): Promise<string>;
  /** persistentVolumeClaim volumes (volumes.ts): the claim and its PV (a settled binding may be a read up to the cache TTL old); undefined when absent. */
  persistentVolumeClaim?(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  persistentVolume?(name: string): Promise<PersistentVolume | undefined>;
}

/** An error the kubelet reports as the container's waiting reason CreateContainerConfigError. */
export class ContainerConfigError extends Error {
  constructor(message: string) { super(message); this.name = 'ContainerConfigError'; }
}

/** expandVars replaces $(NAME) with vars[NAME] when defined; $$ escapes a $ (upstream expansion). */
export function expandVars(s: string, vars: ReadonlyMap<string, string>): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch !== '$' || i + 1 >= s.length) { out += ch; continue; }
    const next = s[i + 1];
    if (next === '$') { out += '$'; i++; continue; }
    if (next === '(') {
      const end = s.indexOf(')', i + 2);
      if (end > 0) {
        const name = s.slice(i + 2, end);
        const v = vars.get(name);
        if (v !== undefined) { out += v; i = end; continue; }
        out += s.slice(i, end + 1); i = end; continue;
      }
    }
    out += ch;
  }
  return out;
}

export interface EnvContext { pod: Pod; podIP: string; podIPs: string[]; hostIP: string; nodeName: string }

/** fieldRefValue resolves a downward-API fieldPath (the ones the kubelet supports in env). */
export function fieldRefValue(path: string, ctx: EnvContext): string {
  const m = ctx.pod.metadata ?? {};
  switch (path) {
    case 'metadata.name': return m.name ?? '';
    case 'metadata.namespace': return m.namespace ?? '';
    case 'metadata.uid': return m.uid ?? '';
    case 'spec.nodeName': return ctx.pod.spec?.nodeName ?? ctx.nodeName;
    case 'spec.serviceAccountName': return ctx.pod.spec?.serviceAccountName ?? '';
    case 'status.podIP': return ctx.podIP;
    case 'status.podIPs': return ctx.podIPs.join(',');
    case 'status.hostIP': case 'status.hostIPs': return ctx.hostIP;
  }
  const lm = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (lm) return (lm[1] === 'labels' ? m.labels : m.annotations)?.[lm[2]!] ?? '';
  throw new ContainerConfigError(`unsupported fieldPath: ${path}`);
}

const decode = (b64: string): string => Buffer.from(b64, 'base64').toString('utf8');

/** makeEnvironment computes the container's env (CRI KeyValues) or throws ContainerConfigError. */
export async function makeEnvironment(c: Container, ctx: EnvContext, src: ConfigSource): Promise<KeyValue[]> {
  const ns = ctx.pod.metadata?.namespace ?? 'default';
  const vars = new Map<string, string>();
  const order: string[] = [];
  const set = (k: string, v: string) => { if (!vars.has(k)) order.push(k); vars.set(k, v); };
  for (const from of c.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const cm = await src.configMap(ns, from.configMapRef.name ?? '');
      if (!cm) { if (from.configMapRef.optional) continue; throw new ContainerConfigError(`configmap "${from.configMapRef.name}" not found`); }
      for (const [k, v] of Object.entries(cm.data ?? {})) set(prefix + k, v);
    } else if (from.secretRef) {
      const s = await src.secret(ns, from.secretRef.name ?? '');
      if (!s) { if (from.secretRef.optional) continue; throw new ContainerConfigError(`secret "${from.secretRef.name}" not found`); }
      for (const [k, v] of Object.entries(s.data ?? {})) set(prefix + k, decode(v));
      for (const [k, v] of Object.entries(s.stringData ?? {})) set(prefix + k, v);
    }
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined || !e.valueFrom) { set(e.name, expandVars(e.value ?? '', vars)); continue; }
    const vf = e.valueFrom;
    if (vf.fieldRef) set(e.name, fieldRefValue(vf.fieldRef.fieldPath, ctx));
    else if (vf.configMapKeyRef) {
      const ref = vf.configMapKeyRef;
      const cm = await src.configMap(ns, ref.name ?? '');
      if (!cm) { if (ref.optional) continue; throw new ContainerConfigError(`configmap "${ref.name}" not found`); }
      const v = cm.data?.[ref.key];
      if (v === undefined) { if (ref.optional) continue; throw new ContainerConfigError(`couldn't find key ${ref.key} in ConfigMap ${ns}/${ref.name}`); }
      set(e.name, v);
    } else if (vf.secretKeyRef) {
      const ref = vf.secretKeyRef;
      const s = await src.secret(ns, ref.name ?? '');
      if (!s) { if (ref.optional) continue; throw new ContainerConfigError(`secret "${ref.name}" not found`); }
      const raw = s.data?.[ref.key];
      const v = raw !== undefined ? decode(raw) : s.stringData?.[ref.key];
      if (v === undefined) { if (ref.optional) continue; throw new ContainerConfigError(`couldn't find key ${ref.key} in Secret ${ns}/${ref.name}`); }
      set(e.name, v);
    } else if (vf.resourceFieldRef) {
      const r = vf.resourceFieldRef.resource;
      const [kind, res] = r.split('.') as [string, string];
      const q = (kind === 'limits' ? c.resources?.limits : c.resources?.requests)?.[res];
      set(e.name, q === undefined ? '' : String(q));
    }
  }
  return order.map((key) => ({ key, value: vars.get(key) ?? '' }));
}

/** envMap turns KeyValues into a map for $(VAR) expansion of command and args. */
export const envMap = (kvs: readonly KeyValue[]): Map<string, string> => new Map(kvs.map((kv) => [kv.key, kv.value]));
