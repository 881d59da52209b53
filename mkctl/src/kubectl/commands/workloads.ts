/** `scale`, `rollout status|history|undo|restart|pause|resume`. */
import type { Command } from 'commander';
import { Deployments, ReplicaSets, qualifiedResource, type KubeObject } from '@mk8s/api';
import type * as apps from 'kubernetes-types/apps/v1.js';
import { CliError, type CliContext } from '../context.js';
import { getObject, listObjects, objectPath } from '../api-helpers.js';
import { kindPrefix, parseResourceArgs } from '../resources.js';
import { deploymentRolloutStatus, ProgressLine, unsupportedRollout } from '../rollout-status.js';
import { parseDurationMs } from './delete.js';
import { tabwrite } from '../printers/tabwriter.js';

const REVISION = 'deployment.kubernetes.io/revision';

export function registerWorkloads(program: Command, ctx: () => CliContext): void {
  program.command('scale').description('Set a new size for a deployment or replica set')
    .argument('<args...>', 'TYPE NAME | TYPE/NAME')
    .requiredOption('--replicas <n>', 'the new desired number of replicas')
    .option('--current-replicas <n>', 'precondition for current size')
    .action(async (args: string[], o: { replicas: string; currentReplicas?: string }) => {
      const c = ctx();
      const n = Number(o.replicas);
      if (!Number.isInteger(n) || n < 0) throw new CliError('error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0');
      for (const ref of parseResourceArgs(args)) {
        if (!ref.resource.subresources.includes('scale')) throw new CliError(`error: no scaler has been implemented for {"${ref.resource.group}" "${ref.resource.kind}"}`);
        for (const name of ref.names) {
          if (o.currentReplicas !== undefined) {
            const cur = await c.client.requestJson<{ spec?: { replicas?: number } }>({ path: `${objectPath(ref.resource, c.namespace, name)}/scale` });
            if ((cur.spec?.replicas ?? 0) !== Number(o.currentReplicas)) throw new CliError(`error: Expected replicas to be ${o.currentReplicas}, was ${cur.spec?.replicas ?? 0}`);
          }
          await c.client.requestJson({ method: 'PATCH', path: `${objectPath(ref.resource, c.namespace, name)}/scale`, body: { spec: { replicas: n } }, contentType: 'application/merge-patch+json' });
          c.print(`${kindPrefix(ref.resource)}/${name} scaled\n`);
        }
      }
    });

  const rollout = program.command('rollout').description('Manage the rollout of a deployment');
  rollout.command('status').argument('<args...>').description('Show the status of the rollout')
    .option('-w, --watch <bool>', 'watch the status until the rollout ends', 'true')
    .option('--timeout <duration>', 'time to wait before giving up (0: forever)', '0s')
    .action(async (args: string[], o: { watch: string; timeout: string }) => {
      const c = ctx();
      const [ref] = parseResourceArgs(args);
      if (!ref?.names[0]) throw new CliError('error: you must provide a resource and name');
      if (ref.resource.kind !== 'Deployment') { throw new CliError(`error: ${unsupportedRollout(ref.resource.kind).error!}`); }
      const deadline = parseDurationMs(o.timeout) || Infinity;
      const start = Date.now();
      const progress = new ProgressLine(c.streams.out);
      for (;;) {
        const d = await getObject<apps.Deployment & KubeObject>(c.client, Deployments, c.namespace, ref.names[0]);
        const st = deploymentRolloutStatus(d);
        if (st.error) throw new CliError(`error: ${st.error}`);
        if (st.done) { progress.done(st.message); return; }
        progress.update(st.message);
        if (o.watch === 'false') { progress.done(st.message); return; }
        if (Date.now() - start > deadline) throw new CliError('error: timed out waiting for the condition');
        await new Promise((r) => setTimeout(r, c.streams.out.isTTY ? 100 : 500));
      }
    });
  rollout.command('history').argument('<args...>').description('View rollout history')
    .option('--revision <n>', 'details of one revision')
    .action(async (args: string[], o: { revision?: string }) => {
      const c = ctx();
      const { d, rss } = await deploymentAndReplicaSets(c, args);
      const revs = rss.map((r) => ({ rev: Number(r.metadata?.annotations?.[REVISION] ?? 0), rs: r })).filter((x) => x.rev > 0).sort((a, b) => a.rev - b.rev);
      if (o.revision) {
        const x = revs.find((r) => r.rev === Number(o.revision));
        if (!x) throw new CliError(`error: unable to find the specified revision`);
        c.print(`deployment.apps/${d.metadata!.name!} with revision #${x.rev}\n`);
        c.print(`Pod Template:\n  Labels:\t${Object.entries(x.rs.spec?.template?.metadata?.labels ?? {}).map(([k, v]) => `${k}=${v}`).join('\n\t')}\n`);
        for (const ct of x.rs.spec?.template?.spec?.containers ?? []) c.print(`  Containers:\n   ${ct.name}:\n    Image:\t${ct.image ?? ''}\n`);
        return;
      }
      const lines = ['REVISION\tCHANGE-CAUSE', ...revs.map((x) => `${x.rev}\t${x.rs.metadata?.annotations?.['kubernetes.io/change-cause'] ?? '<none>'}`)];
      c.print(`deployment.apps/${d.metadata!.name!} \n${tabwrite(`${lines.join('\n')}\n`, { minwidth: 0, padding: 2 })}\n`);
    });
  rollout.command('undo').argument('<args...>').description('Roll back to a previous rollout')
    .option('--to-revision <n>', 'the revision to roll back to (0: the previous one)', '0')
    .action(async (args: string[], o: { toRevision: string }) => {
      const c = ctx();
      const { d, rss } = await deploymentAndReplicaSets(c, args);
      const revs = rss.map((r) => ({ rev: Number(r.metadata?.annotations?.[REVISION] ?? 0), rs: r })).filter((x) => x.rev > 0).sort((a, b) => b.rev - a.rev);
      const want = Number(o.toRevision);
      const target = want > 0 ? revs.find((x) => x.rev === want) : revs[1];
      if (!target) throw new CliError(want > 0 ? `error: unable to find specified revision ${want} in history` : `error: no rollout history found for deployment "${d.metadata!.name!}"`);
      const tpl = structuredClone(target.rs.spec!.template!);
      if (tpl.metadata?.labels) delete tpl.metadata.labels['pod-template-hash'];
      if (JSON.stringify(tpl.spec) === JSON.stringify(d.spec?.template?.spec) && JSON.stringify(tpl.metadata?.labels) === JSON.stringify(d.spec?.template?.metadata?.labels)) {
        c.print(`deployment.apps/${d.metadata!.name!} skipped rollback (current template already matches revision ${target.rev})\n`);
        return;
      }
      await c.client.requestJson({ method: 'PATCH', path: objectPath(Deployments, c.namespace, d.metadata!.name!), body: [{ op: 'replace', path: '/spec/template', value: tpl }], contentType: 'application/json-patch+json' });
      c.print(`deployment.apps/${d.metadata!.name!} rolled back\n`);
    });
  for (const [verb, done, patch] of [
    ['restart', 'restarted', () => ({ spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString().replace(/\.\d+Z$/, 'Z') } } } } })],
    ['pause', 'paused', () => ({ spec: { paused: true } })],
    ['resume', 'resumed', () => ({ spec: { paused: null } })],
  ] as const) {
    rollout.command(verb).argument('<args...>').description(`${verb} a deployment rollout`).action(async (args: string[]) => {
      const c = ctx();
      for (const ref of parseResourceArgs(args)) {
        if (ref.resource.kind !== 'Deployment') throw new CliError(`error: ${kindPrefix(ref.resource)}/${ref.names[0] ?? ''} ${verb === 'restart' ? 'restarting' : verb === 'pause' ? 'pausing' : 'resuming'} is not supported`);
        for (const name of ref.names) {
          const d = await getObject<apps.Deployment & KubeObject>(c.client, Deployments, c.namespace, name);
          if (verb === 'pause' && d.spec?.paused) throw new CliError(`error: ${qualifiedResource(Deployments)} "${name}" is already paused`);
          if (verb === 'resume' && !d.spec?.paused) throw new CliError(`error: ${qualifiedResource(Deployments)} "${name}" is not paused`);
          await c.client.requestJson({ method: 'PATCH', path: objectPath(Deployments, c.namespace, name), body: patch(), contentType: 'application/strategic-merge-patch+json' });
          c.print(`deployment.apps/${name} ${done}\n`);
        }
      }
    });
  }
}

async function deploymentAndReplicaSets(c: CliContext, args: string[]): Promise<{ d: apps.Deployment & KubeObject; rss: (apps.ReplicaSet & KubeObject)[] }> {
  const [ref] = parseResourceArgs(args);
  if (!ref?.names[0]) throw new CliError('error: you must provide a resource and name');
  if (ref.resource.kind !== 'Deployment') throw new CliError(`error: no history viewer has been implemented for "${ref.resource.kind}"`);
  const d = await getObject<apps.Deployment & KubeObject>(c.client, Deployments, c.namespace, ref.names[0]);
  const rss = (await listObjects<apps.ReplicaSet & KubeObject>(c.client, ReplicaSets, c.namespace)).filter((r) => r.metadata?.ownerReferences?.some((o) => o.uid === d.metadata?.uid));
  return { d, rss };
}
