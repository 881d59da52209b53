/**
 * Link work for the bridge plugin through iproute2 (`ip`), the same operations the reference
 * bridge plugin does through netlink. Host-side commands run in the caller's network namespace
 * (the node's); pod-side ones through `nsenter --net=<CNI_NETNS>`.
 */
import { createHash } from 'node:crypto';
import { mustRun, runCommand, type CommandRunner } from './exec.js';

/** What ADD asks for on the pod side. */
export interface PodInterfaceSpec {
  /** Host end of the veth, in the node netns. */
  hostVeth: string;
  bridge: string;
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
  /** Creates the veth pair, configures the pod end (address, up, default route) and loopback. Returns both MACs. */
  addPodInterface(spec: PodInterfaceSpec): Promise<{ hostMac: string; podMac: string }>;
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
      const r = await this.run('ip', ['link', 'add', name, 'mtu', String(mtu), 'type', 'bridge']);
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

  async addPodInterface(s: PodInterfaceSpec): Promise<{ hostMac: string; podMac: string }> {
    // The peer is created directly inside the pod netns under its final name: no rename, no
    // clash with the node's own eth0. Host side in one batch, pod side in another.
    await mustRun(this.run, 'ip', ['-batch', '-'], [
      `link add ${s.hostVeth} mtu ${s.mtu} type veth peer name ${s.ifname} mtu ${s.mtu} netns ${s.netns}`,
      `link set ${s.hostVeth} master ${s.bridge}`,
      ...(s.hairpin ? [`link set ${s.hostVeth} type bridge_slave hairpin on`] : []),
      `link set ${s.hostVeth} up`,
    ].join('\n') + '\n');
    await this.inPod(s.netns, ['-batch', '-'], [
      'link set lo up',
      `addr add ${s.address} dev ${s.ifname}`,
      `link set ${s.ifname} up`,
      `route replace default via ${s.gateway} dev ${s.ifname}`,
    ].join('\n') + '\n');
    const pod = JSON.parse(await this.inPod(s.netns, ['-j', 'link', 'show', 'dev', s.ifname])) as IpLink[];
    const host = await this.show(s.hostVeth);
    return { hostMac: host?.address ?? '', podMac: pod[0]?.address ?? '' };
  }

  async deleteLink(name: string): Promise<void> {
    const r = await this.run('ip', ['link', 'del', 'dev', name]);
    if (r.code !== 0 && !/cannot find|does not exist|not found/i.test(r.stderr)) throw new Error(`ip link del ${name}: ${r.stderr.trim()}`);
  }

  async linkExists(name: string): Promise<boolean> { return (await this.show(name)) !== undefined; }

  async listLinks(): Promise<Set<string>> {
    const out = await this.ip(['-j', 'link', 'show']);
    return new Set((JSON.parse(out || '[]') as IpLink[]).map((l) => l.ifname ?? '').filter(Boolean));
  }

  async linkMaster(name: string): Promise<string | undefined> { return (await this.show(name))?.master; }

  async podAddresses(netns: string, ifname: string): Promise<string[]> {
    const r = await this.run('nsenter', [`--net=${netns}`, 'ip', '-j', '-4', 'addr', 'show', 'dev', ifname]);
    if (r.code !== 0) return [];
    return (JSON.parse(r.stdout || '[]') as IpLink[]).flatMap((l) => (l.addr_info ?? []).map((a) => `${a.local}/${a.prefixlen}`));
  }
}
