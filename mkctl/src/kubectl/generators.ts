/**
 * kubectl's object generators (`kubectl create namespace|deployment|configmap|secret|service|job`,
 * `kubectl run`, `kubectl expose`): pure functions from the flags to the object kubectl 1.32
 * sends, field for field (upstream kubectl/pkg/cmd/create, run, expose), so `-o yaml
 * --dry-run=client` prints what kubectl prints. File reading is left to the caller.
 */
import type { KubeObject } from '@mk8s/api';

type Obj = Record<string, unknown>;
/** kubectl's generated objects carry `creationTimestamp: null` (a zero metav1.Time). */
const meta = (name: string, extra: Obj = {}): Obj => ({ creationTimestamp: null, ...extra, name });

export function namespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: meta(name), spec: {}, status: {} } as unknown as KubeObject;
}

/**
 * A container name from an image, as `kubectl create deployment` derives it: the last path
 * element without tag or digest; '.' and '_' become '-' plus a random suffix (sanitizeAndUniquify).
 */
export function containerNameFromImage(image: string, random: () => string = randomSuffix): string {
  let name = image.split('/').pop()!;
  name = name.split('@')[0]!.split(':')[0]!;
  if (/[_.]/.test(name)) name = `${name.replace(/[_.]/g, '-')}-${random()}`;
  return name;
}

/** utilrand.String(5): kubectl's alphabet (no vowels, no confusable characters). */
export function randomSuffix(n = 5): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
  return s;
}

export interface DeploymentFlags { images: string[]; replicas?: number; port?: number; command?: string[] }

export function deploymentObject(name: string, o: DeploymentFlags, random?: () => string): KubeObject {
  const labels = { app: name };
  const containers = o.images.map((image) => ({
    ...(o.command?.length ? { command: o.command } : {}),
    image, name: containerNameFromImage(image, random),
    ...(o.port !== undefined && o.port >= 0 ? { ports: [{ containerPort: o.port }] } : {}),
    resources: {},
  }));
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta(name, { labels }),
    spec: { replicas: o.replicas ?? 1, selector: { matchLabels: labels }, strategy: {}, template: { metadata: { creationTimestamp: null, labels }, spec: { containers } } },
    status: {},
  } as unknown as KubeObject;
}

/** A source of key/value data: --from-literal=k=v, --from-file=[k=]path (contents given), --from-env-file lines. */
export interface DataSources { literals?: string[]; files?: { key: string; content: Buffer }[]; envFiles?: string[] }

/** Parses --from-literal's k=v (kubectl: the first '=' splits; an empty key is an error). */
export function parseLiteral(s: string): [string, string] {
  const i = s.indexOf('=');
  if (i <= 0) throw new Error(`error: invalid literal source ${s}, expected key=value`);
  return [s.slice(0, i), s.slice(i + 1)];
}

/** Parses an env file as kubectl does: KEY=VALUE lines, `#` comments and blank lines skipped, a bare KEY takes nothing. */
export function parseEnvFile(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, '');
    if (line === '' || line.startsWith('#')) continue;
    const i = line.indexOf('=');
    if (i < 0) continue;
    out.push([line.slice(0, i), line.slice(i + 1)]);
  }
  return out;
}

function collectData(src: DataSources): { text: Record<string, string>; binary: Record<string, Buffer> } {
  const text: Record<string, string> = {};
  const binary: Record<string, Buffer> = {};
  const put = (k: string, v: string | Buffer) => {
    if (k in text || k in binary) throw new Error(`error: cannot add key ${k}, another key by that name already exists in data: ${JSON.stringify({ ...text })}`);
    if (typeof v === 'string') text[k] = v;
    else if (isUtf8(v)) text[k] = v.toString('utf8'); else binary[k] = v;
  };
  for (const l of src.literals ?? []) put(...parseLiteral(l));
  for (const f of src.files ?? []) put(f.key, f.content);
  for (const e of src.envFiles ?? []) for (const [k, v] of parseEnvFile(e)) put(k, v);
  return { text, binary };
}

const isUtf8 = (b: Buffer) => Buffer.from(b.toString('utf8'), 'utf8').equals(b);
const sortKeys = <T>(r: Record<string, T>): Record<string, T> => Object.fromEntries(Object.keys(r).sort().map((k) => [k, r[k]!]));

export function configMapObject(name: string, src: DataSources): KubeObject {
  const { text, binary } = collectData(src);
  return {
    apiVersion: 'v1',
    ...(Object.keys(binary).length ? { binaryData: sortKeys(Object.fromEntries(Object.entries(binary).map(([k, v]) => [k, v.toString('base64')]))) } : {}),
    ...(Object.keys(text).length ? { data: sortKeys(text) } : {}),
    kind: 'ConfigMap', metadata: meta(name),
  } as unknown as KubeObject;
}

export function secretGenericObject(name: string, src: DataSources, type?: string): KubeObject {
  const { text, binary } = collectData(src);
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(text)) data[k] = Buffer.from(v, 'utf8').toString('base64');
  for (const [k, v] of Object.entries(binary)) data[k] = v.toString('base64');
  return {
    apiVersion: 'v1', ...(Object.keys(data).length ? { data: sortKeys(data) } : {}), kind: 'Secret', metadata: meta(name),
    ...(type ? { type } : {}),
  } as unknown as KubeObject;
}

export function secretTlsObject(name: string, cert: Buffer, key: Buffer): KubeObject {
  return {
    apiVersion: 'v1', data: { 'tls.crt': cert.toString('base64'), 'tls.key': key.toString('base64') },
    kind: 'Secret', metadata: meta(name), type: 'kubernetes.io/tls',
  } as unknown as KubeObject;
}

export interface DockerRegistryFlags { server?: string; username: string; password: string; email?: string }

export function secretDockerRegistryObject(name: string, o: DockerRegistryFlags): KubeObject {
  const server = o.server ?? 'https://index.docker.io/v1/';
  const entry: Obj = { username: o.username, password: o.password, ...(o.email ? { email: o.email } : {}), auth: Buffer.from(`${o.username}:${o.password}`).toString('base64') };
  const json = JSON.stringify({ auths: { [server]: entry } });
  return {
    apiVersion: 'v1', data: { '.dockerconfigjson': Buffer.from(json).toString('base64') },
    kind: 'Secret', metadata: meta(name), type: 'kubernetes.io/dockerconfigjson',
  } as unknown as KubeObject;
}

export interface ServiceFlags { type: 'ClusterIP' | 'NodePort' | 'LoadBalancer'; tcp: string[]; clusterIP?: string; nodePort?: number }

/** `kubectl create service clusterip|nodeport NAME --tcp=port[:targetPort]`. */
export function serviceObject(name: string, o: ServiceFlags): KubeObject {
  const ports = o.tcp.map((spec) => {
    const [p, t] = spec.split(':') as [string, string | undefined];
    const port = Number(p);
    if (!Number.isInteger(port)) throw new Error(`error: invalid --tcp ${spec}`);
    const target = t === undefined ? port : /^\d+$/.test(t) ? Number(t) : t;
    return { name: `${p}-${t ?? p}`, ...(o.nodePort ? { nodePort: o.nodePort } : {}), port, protocol: 'TCP', targetPort: target };
  });
  if (o.clusterIP === 'None' && ports.length === 0) { /* headless without ports is fine */ }
  return {
    apiVersion: 'v1', kind: 'Service', metadata: meta(name, { labels: { app: name } }),
    spec: { ...(o.clusterIP ? { clusterIP: o.clusterIP } : {}), ports, selector: { app: name }, type: o.type },
    status: { loadBalancer: {} },
  } as unknown as KubeObject;
}

export function jobObject(name: string, o: { image: string; command?: string[] }): KubeObject {
  return {
    apiVersion: 'batch/v1', kind: 'Job', metadata: meta(name),
    spec: { template: { metadata: { creationTimestamp: null }, spec: { containers: [{ ...(o.command?.length ? { command: o.command } : {}), image: o.image, name, resources: {} }], restartPolicy: 'Never' } } },
    status: {},
  } as unknown as KubeObject;
}

export interface RunFlags { image: string; port?: number; env?: string[]; labels?: string; restart?: string; command?: boolean; args?: string[]; imagePullPolicy?: string }

/** Parses kubectl's --labels a=b,c=d. */
export function parseLabels(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of s.split(',').filter(Boolean)) {
    const i = part.indexOf('=');
    if (i <= 0) throw new Error(`error: invalid label spec: ${part}`);
    out[part.slice(0, i)] = part.slice(i + 1);
  }
  return out;
}

/** `kubectl run NAME --image=I [--port] [--env] [--labels] [--restart] [--command] -- args`. */
export function runPodObject(name: string, o: RunFlags): KubeObject {
  const labels = o.labels ? parseLabels(o.labels) : { run: name };
  const env = (o.env ?? []).map((e) => { const i = e.indexOf('='); if (i <= 0) throw new Error(`error: invalid env: ${e}`); return { name: e.slice(0, i), value: e.slice(i + 1) }; });
  const container: Obj = {
    ...(o.args?.length && !o.command ? { args: o.args } : {}),
    ...(o.args?.length && o.command ? { command: o.args } : {}),
    ...(env.length ? { env } : {}),
    image: o.image,
    ...(o.imagePullPolicy ? { imagePullPolicy: o.imagePullPolicy } : {}),
    name,
    ...(o.port !== undefined && o.port >= 0 ? { ports: [{ containerPort: o.port }] } : {}),
    resources: {},
  };
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: meta(name, { labels }),
    spec: { containers: [container], dnsPolicy: 'ClusterFirst', restartPolicy: o.restart ?? 'Always' },
    status: {},
  } as unknown as KubeObject;
}

export interface ExposeFlags { port?: string; targetPort?: string; name?: string; type?: string; protocol?: string; labels?: string; selector?: string; clusterIP?: string }

/**
 * `kubectl expose TYPE NAME`: a Service selecting what the object selects (a Deployment's or
 * ReplicaSet's matchLabels, a pod's labels, a service's selector), on --port or the object's
 * container ports. Labels are the object's own unless --labels.
 */
export function exposeServiceObject(target: KubeObject, o: ExposeFlags): KubeObject {
  const spec = (target['spec'] ?? {}) as Obj;
  let selector: Record<string, string> | undefined;
  if (o.selector) selector = parseLabels(o.selector);
  else if (target.kind === 'Pod') selector = target.metadata.labels;
  else if (target.kind === 'Service') selector = spec['selector'] as Record<string, string> | undefined;
  else {
    const sel = spec['selector'] as { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | undefined;
    if (sel?.matchExpressions?.length) throw new Error(`error: couldn't retrieve selectors via --selector flag or introspection: the ${target.kind} has a selector with matchExpressions, which a Service cannot use`);
    selector = sel?.matchLabels;
  }
  if (!selector || Object.keys(selector).length === 0) {
    throw new Error(`error: couldn't retrieve selectors via --selector flag or introspection: the ${String(target.kind).toLowerCase()} has no labels to select`);
  }
  const protocol = o.protocol ?? 'TCP';
  let ports: Obj[];
  if (o.port) {
    ports = o.port.split(',').map((p) => ({ port: Number(p), protocol, targetPort: o.targetPort ? (/^\d+$/.test(o.targetPort) ? Number(o.targetPort) : o.targetPort) : Number(p) }));
  } else {
    const podSpec = (target.kind === 'Pod' ? spec : ((spec['template'] as Obj | undefined)?.['spec'] ?? {})) as Obj;
    const found: Obj[] = [];
    if (target.kind === 'Service') for (const p of (spec['ports'] ?? []) as Obj[]) found.push({ port: p['port'], protocol: p['protocol'] ?? 'TCP', targetPort: p['targetPort'] ?? p['port'] });
    for (const c of (podSpec['containers'] ?? []) as Obj[]) for (const p of (c['ports'] ?? []) as Obj[]) found.push({ port: p['containerPort'], protocol: p['protocol'] ?? 'TCP', targetPort: o.targetPort ? (/^\d+$/.test(o.targetPort) ? Number(o.targetPort) : o.targetPort) : p['containerPort'] });
    if (found.length === 0) throw new Error(`error: couldn't find port via --port flag or introspection`);
    ports = found;
  }
  // More than one port: each needs a name (kubectl names them port-1, port-2…).
  if (ports.length > 1) ports = ports.map((p, i) => ({ name: `port-${i + 1}`, ...p }));
  const labels = o.labels ? parseLabels(o.labels) : target.metadata.labels;
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: meta(o.name ?? target.metadata.name, labels ? { labels } : {}),
    spec: { ...(o.clusterIP ? { clusterIP: o.clusterIP } : {}), ports, selector, ...(o.type ? { type: o.type } : {}) },
    status: { loadBalancer: {} },
  } as unknown as KubeObject;
}
