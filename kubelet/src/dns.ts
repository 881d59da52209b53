/**
 * A pod's name resolution, decided from its spec alone (upstream pkg/kubelet/network/dns and the
 * kubelet's managed /etc/hosts): resolv.conf from dnsPolicy and dnsConfig, the hostname, and
 * the hosts file with the pod's own name. Pure; the pod syncer writes and mounts what this says.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container, Pod } from '@mk8s/api';
import type { DNSConfig, Mount } from '@mk8s/proto';

/** Upstream's resolver limits (validation.MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars). */
export const MAX_NAMESERVERS = 3;
export const MAX_SEARCHES = 32;
export const MAX_SEARCH_CHARS = 2048;

export interface ClusterDnsSettings {
  /** The kubelet's --cluster-dns. Empty: ClusterFirst falls back to Default (upstream). */
  clusterDNS: readonly string[];
  /** The kubelet's --cluster-domain. */
  clusterDomain: string;
  /** The node's resolv.conf (--resolv-conf), for dnsPolicy Default with a dnsConfig to merge into. */
  nodeResolvConf?: { servers: string[]; searches: string[]; options: string[] };
}

/** Parses resolv.conf text: nameserver, search/domain, options lines. */
export function parseResolvConf(text: string): { servers: string[]; searches: string[]; options: string[] } {
  const out = { servers: [] as string[], searches: [] as string[], options: [] as string[] };
  for (const raw of text.split('\n')) {
    const [key, ...rest] = raw.replace(/[#;].*$/, '').trim().split(/\s+/);
    if (key === 'nameserver' && rest[0]) out.servers.push(rest[0]);
    else if (key === 'search' || key === 'domain') out.searches = rest;
    else if (key === 'options') out.options.push(...rest);
  }
  return out;
}

const uniq = (xs: readonly string[]) => [...new Set(xs)];

/** Options as "name[:value]", a later one replacing an earlier one of the same name (upstream mergeDNSOptions). */
function mergeOptions(base: readonly string[], extra: readonly { name?: string; value?: string }[]): string[] {
  const out = new Map<string, string>();
  for (const o of base) out.set(o.split(':')[0] ?? o, o);
  for (const o of extra) if (o.name) out.set(o.name, o.value !== undefined && o.value !== '' ? `${o.name}:${o.value}` : o.name);
  return [...out.values()];
}

/** Trims searches to upstream's limits: at most 32 entries and 2048 characters. */
function trimSearches(s: readonly string[]): string[] {
  const out: string[] = [];
  let chars = 0;
  for (const x of s.slice(0, MAX_SEARCHES)) {
    if (chars + x.length + (out.length ? 1 : 0) > MAX_SEARCH_CHARS) break;
    chars += x.length + (out.length ? 1 : 0);
    out.push(x);
  }
  return out;
}

/**
 * The resolv.conf a pod's sandbox gets; undefined means the node's own (dnsPolicy Default, what
 * the runtime gives a container by default).
 * - ClusterFirst (the default): the cluster DNS, `search <ns>.svc.<zone> svc.<zone> <zone>`,
 *   `options ndots:5`; a hostNetwork pod gets Default instead.
 * - ClusterFirstWithHostNet: ClusterFirst, hostNetwork or not.
 * - Default: the node's.
 * - None: only spec.dnsConfig.
 * spec.dnsConfig is merged into each (nameservers and searches appended, options by name).
 */
export function podDnsConfig(pod: Pod, o: ClusterDnsSettings): DNSConfig | undefined {
  const spec = pod.spec;
  const ns = pod.metadata?.namespace ?? 'default';
  let policy = spec?.dnsPolicy ?? 'ClusterFirst';
  if (policy === 'ClusterFirst' && spec?.hostNetwork) policy = 'Default';
  if ((policy === 'ClusterFirst' || policy === 'ClusterFirstWithHostNet') && o.clusterDNS.length === 0) policy = 'Default';
  const extra = spec?.dnsConfig;
  let base: { servers: string[]; searches: string[]; options: string[] };
  if (policy === 'None') base = { servers: [], searches: [], options: [] };
  else if (policy === 'Default') {
    // The node's file as the runtime writes it by default; dnsConfig needs the node's file read to merge into.
    if (!extra || !o.nodeResolvConf) return undefined;
    base = { servers: [...o.nodeResolvConf.servers], searches: [...o.nodeResolvConf.searches], options: [...o.nodeResolvConf.options] };
  } else {
    const d = o.clusterDomain;
    base = { servers: [...o.clusterDNS], searches: [`${ns}.svc.${d}`, `svc.${d}`, d], options: ['ndots:5'] };
  }
  return {
    servers: uniq([...base.servers, ...(extra?.nameservers ?? [])]).slice(0, MAX_NAMESERVERS),
    searches: trimSearches(uniq([...base.searches, ...(extra?.searches ?? [])])),
    options: mergeOptions(base.options, extra?.options ?? []),
  };
}

/** The pod's hostname: spec.hostname, else its name, at most 63 characters (a DNS label), no trailing dash or dot. */
export function podHostname(pod: Pod): string {
  return (pod.spec?.hostname || pod.metadata?.name || '').slice(0, 63).replace(/[-.]+$/, '');
}

/** `<hostname>.<subdomain>.<ns>.svc.<zone>` for a pod with a subdomain, else undefined. */
export function podFqdn(pod: Pod, clusterDomain: string): string | undefined {
  const sub = pod.spec?.subdomain;
  return sub ? `${podHostname(pod)}.${sub}.${pod.metadata?.namespace ?? 'default'}.svc.${clusterDomain}` : undefined;
}

/** True when the kubelet mounts its hosts file into c (not for hostNetwork pods, not over a user's own /etc/hosts mount). */
export function managesEtcHosts(pod: Pod, c: Pick<Container, 'volumeMounts'>, podIPs: readonly string[]): boolean {
  return !pod.spec?.hostNetwork && podIPs.length > 0 && !(c.volumeMounts ?? []).some((m) => m.mountPath === '/etc/hosts');
}

/** The managed hosts file (upstream managedHostsFileContent): localhost lines, the pod's own name, hostAliases. */
export function etcHostsContent(pod: Pod, podIPs: readonly string[], clusterDomain: string): string {
  const lines = [
    '# Kubernetes-managed hosts file.',
    '127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback', 'fe00::0\tip6-localnet', 'fe00::0\tip6-mcastprefix', 'fe00::1\tip6-allnodes', 'fe00::2\tip6-allrouters',
  ];
  const host = podHostname(pod);
  const fqdn = podFqdn(pod, clusterDomain);
  for (const ip of podIPs) lines.push(fqdn ? `${ip}\t${fqdn}\t${host}` : `${ip}\t${host}`);
  const aliases = pod.spec?.hostAliases ?? [];
  if (aliases.length) {
    lines.push('', '# Entries added by HostAliases.');
    for (const a of aliases) if (a.ip && a.hostnames?.length) lines.push(`${a.ip}\t${a.hostnames.join('\t')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The file's name in the pod's directory (upstream's too). */
export const ETC_HOSTS_FILE = 'etc-hosts';

/** Writes the hosts file into podDir when its content changed (atomically); returns its path. */
export async function writeEtcHosts(podDir: string, content: string): Promise<string> {
  const file = join(podDir, ETC_HOSTS_FILE);
  if (await readFile(file, 'utf8').catch(() => undefined) === content) return file;
  await mkdir(podDir, { recursive: true });
  await writeFile(`${file}.tmp`, content, { mode: 0o644 });
  await rename(`${file}.tmp`, file);
  return file;
}

/** The mount of the hosts file into c, when the kubelet manages it. */
export function etcHostsMounts(pod: Pod, c: Pick<Container, 'volumeMounts'>, podIPs: readonly string[], podDir: string): Mount[] {
  return managesEtcHosts(pod, c, podIPs) ? [{ containerPath: '/etc/hosts', hostPath: join(podDir, ETC_HOSTS_FILE) }] : [];
}
