/** `cordon`, `uncordon`, `drain` (Eviction API; kubectl's drain filters and messages). */
import type { Command } from 'commander';
import { ApiError, isNotFound, Nodes, Pods, type KubeObject } from '@mk8s/api';
import type * as core from 'kubernetes-types/core/v1.js';
import { CliError, type CliContext } from '../context.js';
import { getObject, getOptional, listObjects, objectPath } from '../api-helpers.js';
import { parseDurationMs } from './delete.js';

async function setUnschedulable(c: CliContext, name: string, v: boolean): Promise<void> {
  const node = await getObject<core.Node & KubeObject>(c.client, Nodes, undefined, name);
  const word = v ? 'cordoned' : 'uncordoned';
  if (!!node.spec?.unschedulable === v) { c.print(`node/${name} already ${word}\n`); return; }
  await c.client.requestJson({ method: 'PATCH', path: objectPath(Nodes, undefined, name), body: { spec: { unschedulable: v ? true : null } }, contentType: 'application/strategic-merge-patch+json' });
  c.print(`node/${name} ${word}\n`);
}

export interface DrainFilterOptions { ignoreDaemonsets: boolean; deleteEmptydirData: boolean; force: boolean }
export interface DrainPlan { evict: core.Pod[]; warnings: string[]; errors: string[] }

/** kubectl drain's pod filters (pkg/drain/filters.go), pure. */
export function planDrain(pods: core.Pod[], o: DrainFilterOptions): DrainPlan {
  const plan: DrainPlan = { evict: [], warnings: [], errors: [] };
  const ds: string[] = []; const unmanaged: string[] = []; const local: string[] = []; const dsErr: string[] = []; const unmanagedErr: string[] = []; const localErr: string[] = [];
  for (const p of pods) {
    const id = `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
    if (p.metadata?.annotations?.['kubernetes.io/config.mirror']) continue;
    // Finished pods are deleted without further checks.
    if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') { plan.evict.push(p); continue; }
    const ctl = p.metadata?.ownerReferences?.find((r) => r.controller);
    if (ctl?.kind === 'DaemonSet') { (o.ignoreDaemonsets ? ds : dsErr).push(id); continue; }
    if (!ctl) { (o.force ? unmanaged : unmanagedErr).push(id); if (!o.force) continue; }
    if (p.spec?.volumes?.some((v) => v.emptyDir)) { (o.deleteEmptydirData ? local : localErr).push(id); if (!o.deleteEmptydirData) continue; }
    plan.evict.push(p);
  }
  if (dsErr.length) plan.errors.push(`cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): ${dsErr.join(', ')}`);
  if (unmanagedErr.length) plan.errors.push(`cannot delete Pods that declare no controller (use --force to override): ${unmanagedErr.join(', ')}`);
  if (localErr.length) plan.errors.push(`cannot delete Pods with local storage (use --delete-emptydir-data to override): ${localErr.join(', ')}`);
  if (ds.length) plan.warnings.push(`ignoring DaemonSet-managed Pods: ${ds.join(', ')}`);
  if (unmanaged.length) plan.warnings.push(`deleting Pods that declare no controller: ${unmanaged.join(', ')}`);
  if (local.length) plan.warnings.push(`deleting Pods with local storage: ${local.join(', ')}`);
  return plan;
}

export function registerNodes(program: Command, ctx: () => CliContext): void {
  program.command('cordon').argument('<node>').description('Mark node as unschedulable').action(async (n: string) => setUnschedulable(ctx(), n, true));
  program.command('uncordon').argument('<node>').description('Mark node as schedulable').action(async (n: string) => setUnschedulable(ctx(), n, false));
  program.command('drain').argument('<node>').description('Drain node in preparation for maintenance')
    .option('--ignore-daemonsets', 'ignore DaemonSet-managed pods')
    .option('--delete-emptydir-data', 'continue even if there are pods using emptyDir')
    .option('--force', 'continue even if there are pods that do not declare a controller')
    .option('--grace-period <s>', 'seconds given to each pod to terminate gracefully', '-1')
    .option('--timeout <duration>', 'the length of time to wait before giving up (0: infinite)', '0s')
    .option('--disable-eviction', 'delete pods instead of evicting them')
    .option('--pod-selector <selector>', 'only evict pods matching this label selector')
    .action(async (name: string, o: { podSelector?: string; ignoreDaemonsets?: boolean; deleteEmptydirData?: boolean; force?: boolean; gracePeriod: string; timeout: string; disableEviction?: boolean }) => {
      const c = ctx();
      await setUnschedulable(c, name, true);
      const pods = await listObjects<core.Pod & KubeObject>(c.client, Pods, undefined, { fieldSelector: `spec.nodeName=${name}`, ...(o.podSelector ? { labelSelector: o.podSelector } : {}) });
      const plan = planDrain(pods, { ignoreDaemonsets: !!o.ignoreDaemonsets, deleteEmptydirData: !!o.deleteEmptydirData, force: !!o.force });
      if (plan.errors.length) throw new CliError(`error: unable to drain node "${name}" due to error: [${plan.errors.join(', ')}], continuing command...\nThere are pending nodes to be drained:\n ${name}\n${plan.errors.map((e) => `error: ${e}`).join('\n')}`);
      for (const w of plan.warnings) c.printErr(`Warning: ${w}\n`);
      const grace = Number(o.gracePeriod);
      const deadline = parseDurationMs(o.timeout) || Infinity;
      const start = Date.now();
      const pending = new Map<string, core.Pod>();
      for (const p of plan.evict) {
        const ns = p.metadata!.namespace!; const pn = p.metadata!.name!;
        c.print(`evicting pod ${ns}/${pn}\n`);
        const opts = grace >= 0 ? { gracePeriodSeconds: grace } : {};
        for (;;) {
          try {
            if (o.disableEviction) await c.client.requestRaw({ method: 'DELETE', path: objectPath(Pods, ns, pn), body: { kind: 'DeleteOptions', apiVersion: 'v1', ...opts } });
            else await c.client.requestJson({ method: 'POST', path: `${objectPath(Pods, ns, pn)}/eviction`, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pn, namespace: ns }, deleteOptions: opts } });
            pending.set(`${ns}/${pn}`, p);
            break;
          } catch (e) {
            if (isNotFound(e) && !(await getOptional(c.client, Pods, ns, pn))) break;
            if (e instanceof ApiError && e.reason === 'TooManyRequests' && Date.now() - start < deadline) {
              c.printErr(`error when evicting pods/"${pn}" -n "${ns}" (will retry after 5s): ${(e as ApiError).message}\n`);
              await new Promise((r) => setTimeout(r, 5000));
              continue;
            }
            throw e;
          }
        }
      }
      while (pending.size) {
        for (const [key, p] of pending) {
          const cur = await getOptional<core.Pod & KubeObject>(c.client, Pods, p.metadata!.namespace!, p.metadata!.name!);
          if (!cur || cur.metadata?.uid !== p.metadata?.uid) { c.print(`pod/${p.metadata!.name!} evicted\n`); pending.delete(key); }
        }
        if (!pending.size) break;
        if (Date.now() - start > deadline) throw new CliError(`error: drain did not complete within ${o.timeout}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      c.print(`node/${name} drained\n`);
    });
}
