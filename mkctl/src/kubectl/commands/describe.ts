/** `mkctl describe`: fetches an object, its related objects and Events, prints kubectl's text. */
import type { Command } from 'commander';
import { describeDaemonSet, describePodDisruptionBudget, describeStatefulSet } from '../describe/apps-describers.js';
import { describeCronJob, describeJob } from '../describe/batch-describers.js';
import { ApiError, EndpointSlices, Leases, Pods, ReplicaSets, Events as EventsR, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type * as core from 'kubernetes-types/core/v1.js';
import type * as apps from 'kubernetes-types/apps/v1.js';
import type * as discovery from 'kubernetes-types/discovery/v1.js';
import { CliError, type CliContext } from '../context.js';
import { formatApiError } from '../errors.js';
import { getObject, listObjects } from '../api-helpers.js';
import { parseResourceArgs } from '../resources.js';
import { describeConfigMap, describeDeployment, describeNamespace, describeNode, describePod, describeReplicaSet, describeService } from '../describe/describers.js';
import { describeEvents, LEVEL_0, PrefixWriter, printAnnotationsMultiline, printLabelsMultiline, type EventLike } from '../describe/prefix-writer.js';
import { toYaml } from '../printers/output.js';

export function registerDescribe(program: Command, ctx: () => CliContext): void {
  program.command('describe').description('Show details of a specific resource or group of resources')
    .argument('<args...>', 'TYPE [NAME_PREFIX] | TYPE/NAME')
    .option('-l, --selector <selector>', 'label selector')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('--show-events <bool>', 'show events', 'true')
    .action(async (args: string[], o: { selector?: string; allNamespaces?: boolean; showEvents: string }) => { await runDescribe(ctx(), args, o); });
}

/** Events about one object (kubectl's SearchEvents: name, namespace, kind, uid). */
export async function eventsFor(ctx: CliContext, obj: KubeObject): Promise<core.Event[]> {
  const m = obj.metadata ?? {};
  const ns = m.namespace || 'default';
  const evs = await listObjects<core.Event & KubeObject>(ctx.client, EventsR, ns, { fieldSelector: `involvedObject.name=${m.name ?? ''}` });
  // Node events are recorded with the node's name as uid (kubelet), or its real uid (controllers).
  return evs.filter((e) => (!e.involvedObject.kind || e.involvedObject.kind === obj.kind) && (!e.involvedObject.uid || !m.uid || e.involvedObject.uid === m.uid || (obj.kind === 'Node' && e.involvedObject.uid === m.name)));
}

async function describeOne(ctx: CliContext, r: ResourceDescriptor, obj: KubeObject, showEvents: boolean): Promise<string> {
  const now = Date.now();
  const ev = showEvents ? (await eventsFor(ctx, obj)) as EventLike[] : undefined;
  const ns = obj.metadata?.namespace;
  switch (r.kind) {
    case 'Pod': return describePod(obj as core.Pod, ev, now);
    case 'Deployment': return describeDeployment(obj as apps.Deployment, await listObjects<apps.ReplicaSet & KubeObject>(ctx.client, ReplicaSets, ns), ev, now);
    case 'ReplicaSet': {
      const pods = (await listObjects<core.Pod & KubeObject>(ctx.client, Pods, ns)).filter((p) => p.metadata?.ownerReferences?.some((o) => o.uid === obj.metadata?.uid));
      return describeReplicaSet(obj as apps.ReplicaSet, pods, ev, now);
    }
    case 'Service': {
      const slices = await listObjects<discovery.EndpointSlice & KubeObject>(ctx.client, EndpointSlices, ns, { labelSelector: `kubernetes.io/service-name=${obj.metadata?.name ?? ''}` });
      return describeService(obj as core.Service, slices, ev, now);
    }
    case 'Node': {
      const pods = await listObjects<core.Pod & KubeObject>(ctx.client, Pods, undefined, { fieldSelector: `spec.nodeName=${obj.metadata?.name ?? ''}` });
      let lease: { spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string } } | undefined;
      try { lease = await getObject<KubeObject & { spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string } }>(ctx.client, Leases, 'kube-node-lease', obj.metadata?.name ?? ''); } catch { lease = undefined; }
      return describeNode(obj as core.Node, pods, ev, now, lease);
    }
    case 'Namespace': return describeNamespace(obj as core.Namespace);
    case 'ConfigMap': return describeConfigMap(obj as core.ConfigMap, ev, now);
    case 'DaemonSet': return describeDaemonSet(obj as never, await listObjects<core.Pod & KubeObject>(ctx.client, Pods, ns), ev, now);
    case 'StatefulSet': return describeStatefulSet(obj as never, await listObjects<core.Pod & KubeObject>(ctx.client, Pods, ns), ev, now);
    case 'PodDisruptionBudget': return describePodDisruptionBudget(obj as never, ev, now);
    case 'Job': return describeJob(obj as never, ev, now);
    case 'CronJob': return describeCronJob(obj as never, ev, now);
    default: return describeGeneric(obj, ev, now);
  }
}

/** kubectl's generic describer: metadata, then the rest of the object as YAML-like text. */
function describeGeneric(obj: KubeObject, ev: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = obj.metadata ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  if (m.namespace) w.write(LEVEL_0, `Namespace:\t${m.namespace}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, `API Version:\t${obj.apiVersion ?? ''}\n`);
  w.write(LEVEL_0, `Kind:\t${obj.kind ?? ''}\n`);
  const rest: Record<string, unknown> = { ...(obj as Record<string, unknown>) };
  delete rest['apiVersion']; delete rest['kind']; delete rest['metadata'];
  if (Object.keys(rest).length) w.write(LEVEL_0, toYaml(rest).replace(/\t/g, ' '));
  if (ev) describeEvents(w, ev, now);
  return w.toString();
}

async function runDescribe(ctx: CliContext, args: string[], o: { selector?: string; allNamespaces?: boolean; showEvents: string }): Promise<void> {
  const refs = parseResourceArgs(args);
  if (!refs.length) throw new CliError('error: You must specify the type of resource to describe. Use "mkctl api-resources" for a complete list of supported resources.');
  const showEvents = o.showEvents !== 'false';
  const outs: string[] = [];
  let failed = false;
  for (const ref of refs) {
    const r = ref.resource;
    let objs: KubeObject[] = [];
    if (ref.names.length) {
      for (const n of ref.names) {
        try { objs.push({ ...await getObject(ctx.client, r, ctx.namespace, n), apiVersion: r.group ? `${r.group}/${r.version}` : r.version, kind: r.kind }); } catch (e) {
          if (!(e instanceof ApiError) || e.reason !== 'NotFound') throw e;
          // kubectl falls back to a name prefix match.
          const all = await listObjects(ctx.client, r, ctx.namespace);
          const pref = all.filter((x) => x.metadata?.name?.startsWith(n));
          if (pref.length) objs.push(...pref); else { ctx.printErr(`${formatApiError(e)}\n`); failed = true; }
        }
      }
    } else {
      objs = await listObjects(ctx.client, r, o.allNamespaces ? undefined : ctx.namespace, o.selector ? { labelSelector: o.selector } : {});
    }
    for (const obj of objs) outs.push(await describeOne(ctx, r, obj, showEvents));
  }
  if (!outs.length && !failed) ctx.printErr(`No resources found in ${ctx.namespace} namespace.\n`);
  ctx.print(outs.join('\n\n'));
  if (failed) process.exitCode = 1;
}
