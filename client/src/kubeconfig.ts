/**
 * Kubeconfig loading (client-go tools/clientcmd): clusters, users, contexts, current-context,
 * resolved to what one connection needs. File paths inside a kubeconfig are relative to it.
 */
import { readFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, delimiter } from 'node:path';
import yaml from 'js-yaml';

export interface KubeConfigCluster {
  server: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
}
export interface KubeConfigUser {
  token?: string;
  tokenFile?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  username?: string;
  password?: string;
}
export interface KubeConfigContext { cluster: string; user?: string; namespace?: string }

/** A parsed kubeconfig (several files on $KUBECONFIG are merged: the first definition of a name wins). */
export interface KubeConfig {
  clusters: { name: string; cluster: KubeConfigCluster }[];
  users: { name: string; user: KubeConfigUser }[];
  contexts: { name: string; context: KubeConfigContext }[];
  'current-context'?: string;
  /** The directory of the file each named entry came from (to resolve relative paths). */
  baseDirs?: Record<string, string>;
  /** The first file read. */
  path?: string;
}

/** What one connection to the apiserver needs, with file paths already read. */
export interface RestConfig {
  server: string;
  /** The context's namespace. @default 'default' */
  namespace: string;
  token?: string;
  username?: string;
  password?: string;
  /** PEM. */
  ca?: string;
  cert?: string;
  key?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
}

/** The kubeconfig paths in effect: the given one, else each of $KUBECONFIG, else ~/.kube/config. */
export function kubeconfigPaths(path?: string, env: NodeJS.ProcessEnv = process.env): string[] {
  if (path) return [path];
  const fromEnv = env['KUBECONFIG'];
  if (fromEnv) return fromEnv.split(delimiter).filter(Boolean);
  return [join(env['HOME'] ?? homedir(), '.kube', 'config')];
}

/** Reads and merges kubeconfig files. Throws if none of them exists. */
export function loadKubeConfig(path?: string, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const paths = kubeconfigPaths(path, env).filter((p) => path || existsSync(p));
  if (paths.length === 0) throw new Error(`no kubeconfig found (tried ${kubeconfigPaths(undefined, env).join(', ')})`);
  const out: KubeConfig = { clusters: [], users: [], contexts: [], baseDirs: {} };
  for (const p of paths) {
    const doc = parseKubeConfig(readFileSync(p, 'utf8'));
    const dir = dirname(p);
    out.path ??= p;
    for (const c of doc.clusters) if (!out.clusters.some((x) => x.name === c.name)) { out.clusters.push(c); out.baseDirs![`cluster:${c.name}`] = dir; }
    for (const u of doc.users) if (!out.users.some((x) => x.name === u.name)) { out.users.push(u); out.baseDirs![`user:${u.name}`] = dir; }
    for (const c of doc.contexts) if (!out.contexts.some((x) => x.name === c.name)) out.contexts.push(c);
    if (!out['current-context'] && doc['current-context']) out['current-context'] = doc['current-context'];
  }
  return out;
}

/** Parses kubeconfig YAML text (no file access). */
export function parseKubeConfig(text: string): KubeConfig {
  const doc = (yaml.load(text) ?? {}) as Partial<KubeConfig>;
  const out: KubeConfig = { clusters: doc.clusters ?? [], users: doc.users ?? [], contexts: doc.contexts ?? [] };
  if (doc['current-context']) out['current-context'] = doc['current-context'];
  return out;
}

/** Resolves a context (the current one by default) into a RestConfig, reading referenced files. */
export function restConfigFromKubeConfig(cfg: KubeConfig, o: { context?: string; readFile?: (p: string) => string } = {}): RestConfig {
  const read = o.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const ctxName = o.context ?? cfg['current-context'];
  const ctx = ctxName ? cfg.contexts.find((c) => c.name === ctxName)?.context : cfg.contexts[0]?.context;
  if (ctxName && !ctx) throw new Error(`context "${ctxName}" does not exist in the kubeconfig`);
  const clusterName = ctx?.cluster ?? cfg.clusters[0]?.name;
  const cluster = cfg.clusters.find((c) => c.name === clusterName)?.cluster;
  if (!cluster?.server) throw new Error(`cluster "${clusterName ?? ''}" has no server in the kubeconfig`);
  const user = ctx?.user ? cfg.users.find((u) => u.name === ctx.user)?.user : undefined;
  const rel = (kind: 'cluster' | 'user', name: string | undefined, p: string) =>
    isAbsolute(p) ? p : join(cfg.baseDirs?.[`${kind}:${name ?? ''}`] ?? (cfg.path ? dirname(cfg.path) : process.cwd()), p);
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

  const rc: RestConfig = { server: cluster.server.replace(/\/+$/, ''), namespace: ctx?.namespace || 'default' };
  if (cluster['certificate-authority-data']) rc.ca = b64(cluster['certificate-authority-data']);
  else if (cluster['certificate-authority']) rc.ca = read(rel('cluster', clusterName, cluster['certificate-authority']));
  if (cluster['insecure-skip-tls-verify']) {
    // As client-go: trusting a CA and skipping verification at once is a misconfiguration.
    if (rc.ca) throw new Error('specifying a root certificates file with the insecure flag is not allowed');
    rc.insecureSkipTlsVerify = true;
  }
  if (cluster['tls-server-name']) rc.tlsServerName = cluster['tls-server-name'];
  if (user) {
    if (user.token) rc.token = user.token;
    else if (user.tokenFile) rc.token = read(rel('user', ctx?.user, user.tokenFile)).trim();
    if (user['client-certificate-data']) rc.cert = b64(user['client-certificate-data']);
    else if (user['client-certificate']) rc.cert = read(rel('user', ctx?.user, user['client-certificate']));
    if (user['client-key-data']) rc.key = b64(user['client-key-data']);
    else if (user['client-key']) rc.key = read(rel('user', ctx?.user, user['client-key']));
    if (user.username) rc.username = user.username;
    if (user.password) rc.password = user.password;
  }
  return rc;
}
