/** `mkctl trace <kind>/<name>`: fetches what diagnose() needs and prints the chain. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { ConfigMaps, Deployments, EndpointSlices, Events, Jobs, Nodes, PersistentVolumeClaims, PersistentVolumes, Pods, ReplicaSets, Secrets, Services, type KubeObject } from '@mk8s/api';
import type * as core from 'kubernetes-types/core/v1.js';
import { CliError, type CliContext } from '../kubectl/context.js';
import { getObject, listObjects } from '../kubectl/api-helpers.js';
import { parseResourceArgs } from '../kubectl/resources.js';
import { probeDns } from '../doctor/dns-probe.js';
import { diagnose, firstBroken, formatTrace, proxyEvidenceFromIptables, type Link, type ProxyEvidence, type TraceInput } from './diagnose.js';
import { diagnoseDaemonSet, diagnoseStatefulSet } from './workloads.js';
import { diagnoseCronJob, diagnoseJob } from './batch.js';

const run = promisify(execFile);

/** Reads each node's nat table inside its netns (local mode, root); undefined if impossible. */
export async function readProxyEvidence(nodes: string[], services: { namespace: string; name: string }[]): Promise<Record<string, ProxyEvidence[]> | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  let netns: string;
  try { netns = (await run('ip', ['netns', 'list'], { timeout: 5000 })).stdout; } catch { return undefined; }
  const out: Record<string, ProxyEvidence[]> = {};
  for (const n of nodes) {
    const ns = `mk8s-${n}`;
    if (!netns.split('\n').some((l) => l.split(' ')[0] === ns)) return undefined;
    try {
      const { stdout } = await run('ip', ['netns', 'exec', ns, 'iptables-save', '-t', 'nat'], { timeout: 10_000, maxBuffer: 64 << 20 });
      out[n] = proxyEvidenceFromIptables(n, stdout, services);
    } catch (e) {
      out[n] = services.map(() => ({ node: n, present: false, endpoints: 0, detail: `iptables-save failed: ${e instanceof Error ? e.message.split('\n')[0]! : String(e)}` }));
    }
  }
  return out;
}

export async function gatherTrace(ctx: CliContext, arg: string): Promise<TraceInput> {
  const refs = parseResourceArgs(arg.includes('/') ? [arg] : arg.split(/\s+/));
  const ref = refs[0];
  const name = ref?.names[0];
  if (!ref || !name) throw new CliError('error: trace needs TYPE/NAME, e.g. mkctl trace deployment/web');
  const kind = ref.resource.kind;
  if (!['Deployment', 'ReplicaSet', 'Pod', 'Service', 'PersistentVolumeClaim'].includes(kind)) throw new CliError(`error: trace follows deployments, replicasets, pods, services and persistentvolumeclaims, not ${ref.resource.resource}`);
  const ns = ctx.namespace;
  const c = ctx.client;
  const target = await getObject(c, ref.resource, ns, name);
  const [replicaSets, pods, services, endpointSlices, nodes, events, cms, secrets] = await Promise.all([
    listObjects(c, ReplicaSets, ns), listObjects(c, Pods, ns), listObjects(c, Services, ns), listObjects(c, EndpointSlices, ns),
    listObjects(c, Nodes, undefined), listObjects(c, Events, ns), listObjects(c, ConfigMaps, ns), listObjects(c, Secrets, ns).catch(() => undefined),
  ]);
  const inp: TraceInput = {
    kind: kind as TraceInput['kind'], name, namespace: ns,
    replicaSets: replicaSets as never, pods: pods as never, services: services as never, endpointSlices: endpointSlices as never,
    nodes: nodes as never, events: events as never, configMaps: cms.map((x) => x.metadata!.name!),
    ...(secrets ? { secrets: secrets.map((x: KubeObject) => x.metadata!.name!) } : {}),
  };
  if (kind === 'Deployment') inp.deployment = target as never;
  if (kind === 'ReplicaSet') inp.replicaSet = target as never;
  if (kind === 'Pod') inp.pod = target as never;
  if (kind === 'Service') inp.service = target as never;
  if (kind === 'PersistentVolumeClaim') inp.claim = target as never;
  const [claims, volumes] = await Promise.all([listObjects(c, PersistentVolumeClaims, ns).catch(() => []), listObjects(c, PersistentVolumes, undefined).catch(() => [])]);
  inp.claims = claims as never; inp.volumes = volumes as never;
  const svcs = (services as (core.Service & KubeObject)[]).filter((s) => s.spec?.clusterIP && s.spec.clusterIP !== 'None').map((s) => ({ namespace: ns, name: s.metadata!.name! }));
  const proxy = await readProxyEvidence(nodes.map((n) => n.metadata!.name!), svcs);
  if (proxy) {
    inp.proxy = proxy;
    // The dns link: the traced Service's name (or those selecting the traced pods) from each node.
    const named = kind === 'Service' ? [name] : svcs.map((x) => x.name);
    const all = await Promise.all(nodes.flatMap((n) => named.map((s) => probeDns(n.metadata!.name!, `${s}.${ns}.svc.cluster.local`))));
    inp.dns = {};
    for (const p of all) (inp.dns[p.node] ??= []).push(p);
  }
  void Deployments;
  return inp;
}

/** DaemonSets and StatefulSets (workloads.ts); undefined for the kinds diagnose() follows. */
async function traceWorkload(ctx: CliContext, arg: string): Promise<Link[] | undefined> {
  const ref = parseResourceArgs(arg.includes('/') ? [arg] : arg.split(/\s+/))[0];
  const name = ref?.names[0];
  if (!ref || !name || !['DaemonSet', 'StatefulSet', 'Job', 'CronJob'].includes(ref.resource.kind)) return undefined;
  const target = await getObject(ctx.client, ref.resource, ctx.namespace, name);
  if (ref.resource.kind === 'Job' || ref.resource.kind === 'CronJob') {
    const [pods, events] = await Promise.all([listObjects(ctx.client, Pods, ctx.namespace), listObjects(ctx.client, Events, ctx.namespace, { fieldSelector: `involvedObject.name=${name}` })]);
    if (ref.resource.kind === 'Job') return diagnoseJob(target as never, pods as never, events as never);
    return diagnoseCronJob(target as never, (await listObjects(ctx.client, Jobs, ctx.namespace)) as never, pods as never, events as never);
  }
  const pods = await listObjects(ctx.client, Pods, ctx.namespace);
  if (ref.resource.kind === 'StatefulSet') return diagnoseStatefulSet(target as never, pods as never);
  return diagnoseDaemonSet(target as never, (await listObjects(ctx.client, Nodes, undefined)) as never, pods as never);
}

export function registerTrace(program: Command, ctx: () => CliContext): void {
  program.command('trace').description('Walk the chain for an object (stored → children → scheduled → volumes → image → started → ready → endpoints → kube-proxy; a claim: claim → volume → node → mounted) and name the first broken link')
    .argument('<object>', 'TYPE/NAME: deployment/web, pod/web-abc, service/web, rs/web-123, pvc/data')
    .option('-o, --output <format>', 'json: the links as JSON')
    .action(async (arg: string, o: { output?: string }) => {
      const c = ctx();
      const links = (await traceWorkload(c, arg)) ?? diagnose(await gatherTrace(c, arg));
      if (o.output === 'json') c.print(`${JSON.stringify(links, null, 2)}\n`);
      else c.print(formatTrace(links));
      // Like a check: non-zero when a link is broken, so scripts can wait on it.
      if (firstBroken(links)) process.exitCode = 1;
    });
}
