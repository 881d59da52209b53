/** `mkctl doctor network`: reads each node's netns and IPAM files, compares with the API. */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { EndpointSlices, Nodes, Pods, Services, type KubeObject } from '@mk8s/api';
import type * as core from 'kubernetes-types/core/v1.js';
import type * as discovery from 'kubernetes-types/discovery/v1.js';
import { CliError, type CliContext } from '../kubectl/context.js';
import { listObjects } from '../kubectl/api-helpers.js';
import { statePaths } from '../cluster/paths.js';
import { DNS_CHECK_SERVICE, checkNetwork, formatReports, type ApiView, type NodeObservation } from './network-check.js';
import { probeDns } from '@mk8s/api/trace-node';

const run = promisify(execFile);

function readAllocations(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  for (const net of readdirSync(dir)) {
    const d = join(dir, net);
    let files: string[];
    try { files = readdirSync(d); } catch { continue; }
    for (const f of files) if (/^\d+\.\d+\.\d+\.\d+$/.test(f)) out[f] = readFileSync(join(d, f), 'utf8').split(/\r?\n/)[0] ?? '';
  }
  return out;
}

async function observe(node: string, ipamDir: string): Promise<NodeObservation> {
  const ns = `mk8s-${node}`;
  const o: NodeObservation = { node, reachable: false, routes: [], allocations: readAllocations(ipamDir) };
  try {
    const addr = JSON.parse((await run('ip', ['-n', ns, '-j', 'addr', 'show'], { timeout: 5000 })).stdout) as { ifname: string; operstate: string; flags: string[]; addr_info: { family: string; local: string; prefixlen: number }[] }[];
    o.reachable = true;
    const br = addr.find((l) => l.ifname === 'cni0');
    if (br) o.bridge = { up: br.flags.includes('UP'), addrs: br.addr_info.filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`) };
    o.routes = (await run('ip', ['-n', ns, 'route'], { timeout: 5000 })).stdout.split('\n').filter(Boolean);
    o.nat = (await run('ip', ['netns', 'exec', ns, 'iptables-save', '-t', 'nat'], { timeout: 10_000, maxBuffer: 64 << 20 })).stdout;
    o.dns = await probeDns(node, `${DNS_CHECK_SERVICE.name}.${DNS_CHECK_SERVICE.namespace}.svc.cluster.local`);
  } catch (e) {
    o.error = e instanceof Error ? e.message.split('\n')[0]! : String(e);
  }
  return o;
}

export function registerDoctor(program: Command, ctx: () => CliContext): void {
  const doctor = program.command('doctor').description('check the cluster for inconsistencies');
  doctor.command('network').description('per node: bridge, routes, IPAM allocations, kube-proxy chains and cluster DNS, and what is inconsistent')
    .option('-o, --output <format>', 'json')
    .action(async (o: { output?: string }) => {
      const c = ctx();
      if (process.getuid?.() !== 0) throw new CliError('error: doctor network reads node network namespaces: run it as root on the machine that runs the nodes');
      const [nodes, pods, services, slices] = await Promise.all([
        listObjects<core.Node & KubeObject & { metadata: { name: string } }>(c.client, Nodes, undefined), listObjects<core.Pod & KubeObject & { metadata: { name: string } }>(c.client, Pods, undefined),
        listObjects<core.Service & KubeObject & { metadata: { name: string } }>(c.client, Services, undefined), listObjects<discovery.EndpointSlice & KubeObject & { metadata: { name: string } }>(c.client, EndpointSlices, undefined),
      ]);
      const api: ApiView = {
        nodes: nodes.map((n) => {
          const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
          return { name: n.metadata.name, ready: n.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false, ...(ip ? { internalIP: ip } : {}), ...(n.spec?.podCIDR ? { podCIDR: n.spec.podCIDR } : {}) };
        }),
        pods: pods.filter((p) => p.spec?.nodeName && p.status?.podIP && p.status.phase !== 'Succeeded' && p.status.phase !== 'Failed').map((p) => ({ namespace: p.metadata.namespace ?? '', name: p.metadata.name, node: p.spec!.nodeName!, ip: p.status!.podIP!, hostNetwork: !!p.spec?.hostNetwork })),
        services: services.map((s) => {
          const mine = slices.filter((x) => x.metadata.namespace === s.metadata.namespace && x.metadata.labels?.['kubernetes.io/service-name'] === s.metadata.name);
          const ready = new Set(mine.flatMap((x) => (x.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses)));
          return { namespace: s.metadata.namespace ?? '', name: s.metadata.name, clusterIP: s.spec?.clusterIP ?? '', readyEndpoints: ready.size };
        }),
      };
      const paths = statePaths();
      const obs = await Promise.all(api.nodes.map((n) => observe(n.name, join(paths.nodes, n.name, 'cni', 'ipam'))));
      const reports = checkNetwork(api, obs);
      c.print(o.output === 'json' ? `${JSON.stringify(reports, null, 2)}\n` : formatReports(reports));
      if (reports.some((r) => r.problems.length)) process.exitCode = 1;
    });
}
