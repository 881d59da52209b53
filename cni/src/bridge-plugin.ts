/**
 * The mk8s-bridge CNI plugin (reference `bridge` + `host-local` in one): a bridge in the node's
 * netns holding the pod CIDR's gateway, a veth into each pod, and IPs from the node's pod CIDR
 * kept on disk. Pure of process globals: env, stdin, the kernel (LinkOps) and the clock are
 * injected, so the whole command surface is unit-tested with FakeLinkOps.
 */
import { DiskIpam, IpamExhaustedError, LockTimeoutError, type Allocation } from './ipam.js';
import { hostVethName, IprouteLinkOps, type LinkOps } from './link-ops.js';
import { gatewayOf, parseCidr, cidrContains, type Cidr } from './cidr.js';
import { CniError, ERR, SPEC_VERSION, SUPPORTED_VERSIONS, compareVersions, parseEnv, type CniArgs } from './skel.js';

/** The plugin's network configuration (one entry of the conflist's `plugins`). */
export interface BridgeNetConf {
  cniVersion: string;
  name: string;
  type: string;
  /** @default 'cni0' */
  bridge?: string;
  /** The node's spec.podCIDR. */
  podCIDR: string;
  /** Where allocations live (dataDir/name/<ip>). */
  dataDir: string;
  /** @default 1500 */
  mtu?: number;
  /** Lets a pod reach itself through a Service (kube-proxy masquerades hairpin traffic). @default true */
  hairpinMode?: boolean;
  prevResult?: unknown;
  'cni.dev/valid-attachments'?: { containerID: string; ifname: string }[];
}

/** What one invocation needs from the outside world. */
export interface PluginDeps {
  env: NodeJS.ProcessEnv;
  stdin: string;
  links?: LinkOps;
}

/** The process outcome: exit code and what goes to stdout. */
export interface PluginOutcome { code: number; stdout: string }

/** runPlugin executes one CNI command. Never throws: failures become the spec's error JSON and exit 1. */
export async function runPlugin(d: PluginDeps): Promise<PluginOutcome> {
  let version = SPEC_VERSION;
  try {
    const args = parseEnv(d.env);
    if (args.command === 'VERSION') {
      return ok({ cniVersion: SPEC_VERSION, supportedVersions: [...SUPPORTED_VERSIONS] });
    }
    const conf = parseConf(d.stdin);
    version = conf.cniVersion;
    const links = d.links ?? new IprouteLinkOps();
    switch (args.command) {
      case 'ADD': return ok(await cmdAdd(args, conf, links));
      case 'DEL': await cmdDel(args, conf, links); return { code: 0, stdout: '' };
      case 'CHECK': await cmdCheck(args, conf, links); return { code: 0, stdout: '' };
      case 'GC': await cmdGc(conf, links); return { code: 0, stdout: '' };
    }
  } catch (err) {
    const e = err instanceof CniError ? err
      : err instanceof LockTimeoutError ? new CniError(ERR.tryAgainLater, err.message)
        : err instanceof IpamExhaustedError ? new CniError(ERR.ipamExhausted, err.message)
          : new CniError(ERR.io, err instanceof Error ? err.message : String(err));
    return { code: 1, stdout: JSON.stringify(e.toJSON(version)) };
  }
}

function ok(body: unknown): PluginOutcome { return { code: 0, stdout: JSON.stringify(body) }; }

/** parseConf decodes and validates the network configuration (errors 6 and 7, version 1). */
export function parseConf(stdin: string): BridgeNetConf {
  let raw: Record<string, unknown>;
  try { raw = JSON.parse(stdin) as Record<string, unknown>; } catch (err) { throw new CniError(ERR.decode, 'failed to decode network configuration', String(err)); }
  if (typeof raw !== 'object' || raw === null) throw new CniError(ERR.decode, 'network configuration is not an object');
  const cniVersion = String(raw['cniVersion'] ?? '');
  if (!(SUPPORTED_VERSIONS as readonly string[]).includes(cniVersion)) {
    throw new CniError(ERR.incompatibleVersion, `incompatible CNI versions; config is "${cniVersion}", plugin supports [${SUPPORTED_VERSIONS.join(' ')}]`);
  }
  for (const f of ['name', 'podCIDR', 'dataDir'] as const) {
    if (typeof raw[f] !== 'string' || !raw[f]) throw new CniError(ERR.invalidConfig, `network configuration: "${f}" is required`);
  }
  try { parseCidr(String(raw['podCIDR'])); } catch (err) { throw new CniError(ERR.invalidConfig, `network configuration: invalid podCIDR`, String(err)); }
  return raw as unknown as BridgeNetConf;
}

function ipamFor(conf: BridgeNetConf): { ipam: DiskIpam; subnet: Cidr } {
  const subnet = parseCidr(conf.podCIDR);
  return { ipam: new DiskIpam({ dataDir: conf.dataDir, network: conf.name, subnet }), subnet };
}

/**
 * An allocation younger than this is never garbage, veth or not: ADD allocates under the lock
 * but creates the veth after releasing it, so a concurrent ADD's fresh allocation has no veth yet.
 */
export const GC_MIN_AGE_MS = 60_000;

/**
 * collectGarbage frees allocations whose pod is gone: the host veth of an attachment exists
 * exactly as long as the pod's netns (the kernel destroys the pair with the netns), so an
 * allocation without its veth belongs to a sandbox that died, or to an ADD that crashed before
 * the runtime recorded it. Runs under the lock; `present` may be a little older than the lock,
 * which the minimum age covers.
 */
async function collectGarbage(ipam: DiskIpam, keep: (a: Allocation) => boolean, present: Set<string>, nowMs: number): Promise<string[]> {
  const freed: string[] = [];
  for (const a of await ipam.list()) {
    if (keep(a) || present.has(hostVethName(a.containerId, a.ifname))) continue;
    const at = await ipam.allocatedAtMs(a.ip);
    if (at === undefined || nowMs - at < GC_MIN_AGE_MS) continue;
    await ipam.releaseIp(a.ip);
    freed.push(a.ip);
  }
  return freed;
}

/**
 * ADD. Only the IPAM step (GC + allocate: a few small files) holds the network's lock; the link
 * work, which is most of an ADD's time, runs outside it, so concurrent ADDs overlap (every name
 * they touch is derived from their own container id; the bridge setup is idempotent).
 */
async function cmdAdd(args: CniArgs, conf: BridgeNetConf, links: LinkOps): Promise<Record<string, unknown>> {
  const { ipam, subnet } = ipamFor(conf);
  const bridge = conf.bridge ?? 'cni0';
  const mtu = conf.mtu ?? 1500;
  const gateway = gatewayOf(subnet);
  const hostVeth = hostVethName(args.containerId, args.ifname);
  const present = await links.listLinks();
  const alloc = await ipam.withLock(async () => {
    await collectGarbage(ipam, (a) => a.containerId === args.containerId && a.ifname === args.ifname, present, Date.now());
    return ipam.allocate(args.containerId, args.ifname);
  });
  try {
    // A leftover host end (an ADD that died half-way, or a repeated ADD) would make the add fail: start clean.
    if (present.has(hostVeth)) await links.deleteLink(hostVeth);
    const { bridgeMac, hostMac, podMac } = await links.addPodInterface({
      hostVeth, bridge, gatewayCidr: `${gateway}/${subnet.prefix}`, netns: args.netns, ifname: args.ifname, address: `${alloc.ip}/${subnet.prefix}`, gateway, mtu, hairpin: conf.hairpinMode ?? true,
    });
    const legacy = compareVersions(conf.cniVersion, '1.0.0') < 0;
    return {
      cniVersion: conf.cniVersion,
      interfaces: [
        { name: bridge, mac: bridgeMac },
        { name: hostVeth, mac: hostMac },
        { name: args.ifname, mac: podMac, sandbox: args.netns },
      ],
      ips: [{ ...(legacy ? { version: '4' } : {}), address: `${alloc.ip}/${subnet.prefix}`, gateway, interface: 2 }],
      routes: [{ dst: '0.0.0.0/0', gw: gateway }],
      dns: {},
    };
  } catch (err) {
    // Leave nothing behind: the runtime will not DEL an attachment whose ADD failed... it may, but need not.
    await links.deleteLink(hostVeth).catch(() => undefined);
    await ipam.withLock(() => ipam.releaseIp(alloc.ip));
    if (err instanceof Error && /no such file|cannot open network namespace|invalid.*netns|no such process/i.test(err.message)) {
      throw new CniError(ERR.unknownContainer, `network namespace ${args.netns} does not exist`, err.message);
    }
    throw err;
  }
}

async function cmdDel(args: CniArgs, conf: BridgeNetConf, links: LinkOps): Promise<void> {
  const { ipam } = ipamFor(conf);
  // Deleting the host end removes the pod end too; both are no-ops when already gone. The link
  // is the attachment's own, so only the release needs the lock.
  await links.deleteLink(hostVethName(args.containerId, args.ifname));
  await ipam.withLock(() => ipam.release(args.containerId, args.ifname));
}

async function cmdCheck(args: CniArgs, conf: BridgeNetConf, links: LinkOps): Promise<void> {
  if (conf.prevResult === undefined) throw new CniError(ERR.invalidConfig, 'CHECK requires prevResult');
  const { ipam, subnet } = ipamFor(conf);
  const alloc = await ipam.find(args.containerId, args.ifname);
  if (!alloc) throw new CniError(ERR.checkFailed, `no IP allocated for container ${args.containerId} interface ${args.ifname}`);
  const want = `${alloc.ip}/${subnet.prefix}`;
  const have = await links.podAddresses(args.netns, args.ifname);
  if (!have.includes(want)) throw new CniError(ERR.checkFailed, `interface ${args.ifname} in ${args.netns} has [${have.join(' ')}], want ${want}`);
  const hostVeth = hostVethName(args.containerId, args.ifname);
  const master = await links.linkMaster(hostVeth);
  if (master !== (conf.bridge ?? 'cni0')) throw new CniError(ERR.checkFailed, `host veth ${hostVeth} is not attached to bridge ${conf.bridge ?? 'cni0'}`);
  const prevIps = ((conf.prevResult as { ips?: { address?: string }[] }).ips ?? []).map((x) => x.address);
  if (!prevIps.includes(want)) throw new CniError(ERR.checkFailed, `prevResult does not hold ${want}`);
  if (!cidrContains(subnet, alloc.ip)) throw new CniError(ERR.checkFailed, `${alloc.ip} is outside ${conf.podCIDR}`);
}

/** GC (spec 1.1): frees every attachment not in cni.dev/valid-attachments, and stale ones. */
async function cmdGc(conf: BridgeNetConf, links: LinkOps): Promise<void> {
  const { ipam } = ipamFor(conf);
  const valid = new Set((conf['cni.dev/valid-attachments'] ?? []).map((v) => `${v.containerID}/${v.ifname}`));
  await ipam.withLock(async () => {
    for (const a of await ipam.list()) {
      if (valid.has(`${a.containerId}/${a.ifname}`)) continue;
      await links.deleteLink(hostVethName(a.containerId, a.ifname));
      await ipam.releaseIp(a.ip);
    }
  });
}
