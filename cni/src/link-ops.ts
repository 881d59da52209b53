/**
 * Link work for the bridge plugin through iproute2 (`ip`), the same operations the reference
 * bridge plugin does through netlink. Host-side commands run in the caller's network namespace
 * (the node's); pod-side ones through `nsenter --net=<CNI_NETNS>`.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { mustRun, runCommand, type CommandRunner } from './exec.js';

/** What ADD asks for on the pod side. */
export interface PodInterfaceSpec {
  /** Host end of the veth, in the node netns. */
  hostVeth: string;
  bridge: string;
  /** The bridge's address (the pod CIDR's gateway), e.g. "10.244.1.1/24": the bridge is ensured too. */
  gatewayCidr: string;
  /** Path of the pod's network namespace (CNI_NETNS). */
  netns: string;
  /** Pod-side interface name (CNI_IFNAME). */
  ifname: string;
  /** "10.244.1.5/24". */
  address: string;
  gateway: string;
  mtu: number;
  hairpin: boolean;
}

/** LinkOps is the plugin's whole view of the kernel; FakeLinkOps (./testing) records calls. */
export interface LinkOps {
  /** Creates the bridge if missing, gives it gatewayCidr, brings it up. Idempotent. Returns its MAC. */
  ensureBridge(name: string, gatewayCidr: string, mtu: number): Promise<string>;
  /**
   * Ensures the bridge (as ensureBridge), creates the veth pair into it, configures the pod end
   * (address, up, default route) and loopback. Returns the three MACs.
   */
  addPodInterface(spec: PodInterfaceSpec): Promise<{ bridgeMac: string; hostMac: string; podMac: string }>;
  /** Deletes the host end (the kernel removes the pod end with it). Idempotent. */
  deleteLink(name: string): Promise<void>;
  /** Whether a link exists in the node netns. */
  linkExists(name: string): Promise<boolean>;
  /** The names of every link in the node netns (one call, for garbage collection). */
  listLinks(): Promise<Set<string>>;
  /** The master of a link in the node netns, or undefined. */
  linkMaster(name: string): Promise<string | undefined>;
  /** The IPv4 CIDRs on ifname inside netns ([] if the netns or the link is gone). */
  podAddresses(netns: string, ifname: string): Promise<string[]>;
}

/** hostVethName is the host end's name, derived from the attachment so DEL needs no state. */
export function hostVethName(containerId: string, ifname: string): string {
  return `veth${createHash('sha256').update(`${containerId}/${ifname}`).digest('hex').slice(0, 11)}`;
}

/**
 * macFor derives a stable, locally administered unicast MAC from a key. ADD sets the veth ends'
 * addresses itself, so it needs no read-back round trip to report them.
 */
export function macFor(key: string): string {
  const b = createHash('sha256').update(key).digest().subarray(0, 6);
  b[0] = (b[0]! & 0xfe) | 0x02;
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
}

interface IpLink { ifname?: string; address?: string; master?: string; addr_info?: { family?: string; local?: string; prefixlen?: number }[] }

/** IprouteLinkOps implements LinkOps with `ip` and `nsenter`. */
export class IprouteLinkOps implements LinkOps {
  constructor(private readonly run: CommandRunner = runCommand) {}

  private ip(args: string[]): Promise<string> { return mustRun(this.run, 'ip', args); }
  private inPod(netns: string, args: string[], stdin?: string): Promise<string> {
    return mustRun(this.run, 'nsenter', [`--net=${netns}`, 'ip', ...args], stdin);
  }

  private async show(name: string): Promise<IpLink | undefined> {
    const r = await this.run('ip', ['-j', '-d', 'link', 'show', 'dev', name]);
    if (r.code !== 0) return undefined;
    return (JSON.parse(r.stdout) as IpLink[])[0];
  }

  async ensureBridge(name: string, gatewayCidr: string, mtu: number): Promise<string> {
    // One `ip addr show` answers existence, state, MAC and addresses in the common (warm) case.
    const show = async () => {
      const r = await this.run('ip', ['-j', '-4', 'addr', 'show', 'dev', name]);
      return r.code === 0 ? (JSON.parse(r.stdout || '[]') as (IpLink & { flags?: string[] })[])[0] : undefined;
    };
    let link = await show();
    if (!link) {
      // An explicit address pins the bridge's MAC; otherwise the kernel gives it the lowest port's,
      // which changes as pods come and go and leaves stale gateway ARP entries in the pods.
      const r = await this.run('ip', ['link', 'add', name, 'address', macFor(`bridge/${name}/${gatewayCidr}`), 'mtu', String(mtu), 'type', 'bridge']);
      // Another ADD may have created it at the same moment.
      if (r.code !== 0 && !/exists/i.test(r.stderr)) throw new Error(`ip link add ${name}: ${r.stderr.trim()}`);
      link = await show();
    }
    const has = (link?.addr_info ?? []).some((a) => `${a.local}/${a.prefixlen}` === gatewayCidr);
    if (!has) await this.ip(['addr', 'replace', gatewayCidr, 'dev', name]);
    if (!link?.flags?.includes('UP')) await this.ip(['link', 'set', name, 'up']);
    if (!link?.address) link = await this.show(name);
    return link?.address ?? '';
  }

  async addPodInterface(s: PodInterfaceSpec): Promise<{ bridgeMac: string; hostMac: string; podMac: string }> {
    // Two processes for the whole attachment (each exec costs more than the kernel work on a busy
    // node): the host side, bridge included, in one `ip -batch`, the pod side in another. The
    // peer is created directly inside the pod netns under its final name (no rename, no clash with
    // the node's own eth0). Every MAC is chosen here, so nothing needs reading back; the bridge's
    // explicit address also pins it (otherwise the kernel gives it the lowest port's, which
    // changes as pods come and go and leaves stale gateway ARP entries in the pods).
    const bridgeMac = macFor(`bridge/${s.bridge}/${s.gatewayCidr}`);
    const hostMac = macFor(`host/${s.hostVeth}`);
    const podMac = macFor(`pod/${s.hostVeth}/${s.ifname}`);
    const host = [
      `link add ${s.bridge} address ${bridgeMac} mtu ${s.mtu} type bridge`,
      `link set ${s.bridge} address ${bridgeMac}`,
      `addr replace ${s.gatewayCidr} dev ${s.bridge}`,
      `link set ${s.bridge} up`,
      `link add ${s.hostVeth} address ${hostMac} mtu ${s.mtu} type veth peer name ${s.ifname} address ${podMac} mtu ${s.mtu} netns ${s.netns}`,
      `link set ${s.hostVeth} master ${s.bridge}`,
      ...(s.hairpin ? [`link set ${s.hostVeth} type bridge_slave hairpin on`] : []),
      `link set ${s.hostVeth} up`,
    ];
    // -force runs every line; only line 1 (the bridge exists already) may fail.
    const r = await this.run('ip', ['-force', '-batch', '-'], host.join('\n') + '\n');
    const failed = [...r.stderr.matchAll(/Command failed -:(\d+)/g)].map((m) => Number(m[1]));
    if (failed.some((n) => n !== 1) || (r.code !== 0 && failed.length === 0)) throw new Error(`ip -batch (host side): ${r.stderr.trim()}`);
    await this.inPod(s.netns, ['-batch', '-'], [
      'link set lo up',
      `addr add ${s.address} dev ${s.ifname}`,
      `link set ${s.ifname} up`,
      `route replace default via ${s.gateway} dev ${s.ifname}`,
    ].join('\n') + '\n');
    return { bridgeMac, hostMac, podMac };
  }

  async deleteLink(name: string): Promise<void> {
    const r = await this.run('ip', ['link', 'del', 'dev', name]);
    if (r.code !== 0 && !/cannot find|does not exist|not found/i.test(r.stderr)) throw new Error(`ip link del ${name}: ${r.stderr.trim()}`);
  }

  async linkExists(name: string): Promise<boolean> { return (await this.show(name)) !== undefined; }

  /** Read from /proc/self/net/dev, which shows the reading process's netns: no exec. */
  async listLinks(): Promise<Set<string>> {
    const text = await readFile('/proc/self/net/dev', 'utf8');
    return new Set(text.split('\n').slice(2).map((l) => l.split(':')[0]!.trim()).filter(Boolean));
  }

  async linkMaster(name: string): Promise<string | undefined> { return (await this.show(name))?.master; }

  async podAddresses(netns: string, ifname: string): Promise<string[]> {
    const r = await this.run('nsenter', [`--net=${netns}`, 'ip', '-j', '-4', 'addr', 'show', 'dev', ifname]);
    if (r.code !== 0) return [];
    return (JSON.parse(r.stdout || '[]') as IpLink[]).flatMap((l) => (l.addr_info ?? []).map((a) => `${a.local}/${a.prefixlen}`));
  }
}
