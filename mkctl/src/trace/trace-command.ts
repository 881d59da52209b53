/**
 * `mkctl trace <kind>/<name>`: gathers the chain's objects and judges them with @mk8s/api/trace
 * (the same library the dashboard's chain view uses), adds what only this machine can read
 * (kube-proxy's iptables rules and DNS answers inside each node's netns, read by
 * @mk8s/api/trace-node, as the dashboard server does), and prints the chain.
 */
import type { Command } from 'commander';
import {
  firstBroken, gatherTrace, isTraceKind, proxiedServices, traceLinks, type ApiGet, type TraceGathered,
} from '@mk8s/api/trace';
import { probeDns, readProxyEvidence } from '@mk8s/api/trace-node';
import { CliError, type CliContext } from '../kubectl/context.js';
import { parseResourceArgs } from '../kubectl/resources.js';
import { formatTrace } from './format-trace.js';

/** Adds the node-local evidence (kube-proxy rules, then the dns link's lookups) when this process can read it. */
async function addNodeEvidence(g: TraceGathered): Promise<void> {
  if (g.kind !== 'chain') return;
  const inp = g.input;
  const nodes = (inp.nodes ?? []).map((n) => n.metadata?.name ?? '');
  const svcs = proxiedServices(g);
  const proxy = await readProxyEvidence(nodes, svcs);
  if (!proxy) return;
  inp.proxy = proxy;
  // The dns link: the traced Service's name (or those selecting the traced pods) from each node.
  const named = inp.kind === 'Service' ? [inp.name] : svcs.map((x) => x.name);
  const all = await Promise.all(nodes.flatMap((n) => named.map((s) => probeDns(n, `${s}.${inp.namespace}.svc.cluster.local`))));
  inp.dns = {};
  for (const p of all) (inp.dns[p.node] ??= []).push(p);
}

/** Gathers what the chain of arg (TYPE/NAME) needs, node-local evidence included. */
export async function gatherTraceFor(ctx: CliContext, arg: string): Promise<TraceGathered> {
  const refs = parseResourceArgs(arg.includes('/') ? [arg] : arg.split(/\s+/));
  const ref = refs[0];
  const name = ref?.names[0];
  if (!ref || !name) throw new CliError('error: trace needs TYPE/NAME, e.g. mkctl trace deployment/web');
  const kind = ref.resource.kind;
  if (!isTraceKind(kind)) throw new CliError(`error: trace follows deployments, replicasets, pods, services, persistentvolumeclaims, daemonsets, statefulsets, jobs, cronjobs and horizontalpodautoscalers, not ${ref.resource.resource}`);
  const get: ApiGet = (path) => ctx.client.requestJson({ path });
  const g = await gatherTrace(get, { kind, namespace: ctx.namespace, name });
  await addNodeEvidence(g);
  return g;
}

export function registerTrace(program: Command, ctx: () => CliContext): void {
  program.command('trace').description('Walk the chain for an object (stored → children → scheduled → volumes → image → started → ready → endpoints → kube-proxy; a claim: claim → volume → node → mounted; an hpa: target → metrics → current vs target → desired → scale written) and name the first broken link')
    .argument('<object>', 'TYPE/NAME: deployment/web, pod/web-abc, service/web, rs/web-123, pvc/data, hpa/web')
    .option('-o, --output <format>', 'json: the links as JSON')
    .action(async (arg: string, o: { output?: string }) => {
      const c = ctx();
      const links = traceLinks(await gatherTraceFor(c, arg));
      if (o.output === 'json') c.print(`${JSON.stringify(links, null, 2)}\n`);
      else c.print(formatTrace(links));
      // Like a check: non-zero when a link is broken, so scripts can wait on it.
      if (firstBroken(links)) process.exitCode = 1;
    });
}
