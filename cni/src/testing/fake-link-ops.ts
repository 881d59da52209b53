import type { LinkOps, PodInterfaceSpec } from '../link-ops.js';

/** FakeLinkOps is an in-memory kernel for the bridge plugin: links, masters and pod addresses. */
export class FakeLinkOps implements LinkOps {
  readonly calls: string[] = [];
  readonly links = new Map<string, { master?: string }>();
  /** netns path → ifname → CIDRs. */
  readonly pods = new Map<string, Map<string, string[]>>();
  /** netns paths that exist (ADD into any other fails like a missing netns). @default any */
  existingNetns: Set<string> | undefined;
  private failNext: Partial<Record<keyof LinkOps, Error>> = {};

  /** The next call of method rejects with err. */
  injectError(method: keyof LinkOps, err: Error): void { this.failNext[method] = err; }
  private take(m: keyof LinkOps, detail: string): void {
    this.calls.push(`${m} ${detail}`);
    const e = this.failNext[m];
    if (e) { delete this.failNext[m]; throw e; }
  }

  async ensureBridge(name: string, gatewayCidr: string): Promise<string> {
    this.take('ensureBridge', `${name} ${gatewayCidr}`);
    if (!this.links.has(name)) this.links.set(name, {});
    return '02:00:00:00:00:01';
  }
  async addPodInterface(s: PodInterfaceSpec): Promise<{ bridgeMac: string; hostMac: string; podMac: string }> {
    const bridgeMac = await this.ensureBridge(s.bridge, s.gatewayCidr);
    this.take('addPodInterface', `${s.hostVeth} ${s.netns} ${s.address}`);
    if (this.existingNetns && !this.existingNetns.has(s.netns)) throw new Error(`Cannot open network namespace "${s.netns}": No such file or directory`);
    this.links.set(s.hostVeth, { master: s.bridge });
    const m = this.pods.get(s.netns) ?? new Map<string, string[]>();
    m.set(s.ifname, [s.address]);
    this.pods.set(s.netns, m);
    return { bridgeMac, hostMac: '02:00:00:00:00:02', podMac: '02:00:00:00:00:03' };
  }
  async deleteLink(name: string): Promise<void> {
    this.take('deleteLink', name);
    this.links.delete(name);
  }
  async linkExists(name: string): Promise<boolean> { return this.links.has(name); }
  async listLinks(): Promise<Set<string>> { return new Set(this.links.keys()); }
  async linkMaster(name: string): Promise<string | undefined> { return this.links.get(name)?.master; }
  async podAddresses(netns: string, ifname: string): Promise<string[]> { return this.pods.get(netns)?.get(ifname) ?? []; }
}
