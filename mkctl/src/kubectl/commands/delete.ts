/** `mkctl delete`: by -f, by name, by -l or --all; cascade, grace period, force, wait. */
import type { Command } from 'commander';
import { ApiError, isNotFound, type ResourceDescriptor } from '@mk8s/api';
import { CliError, type CliContext } from '../context.js';
import { formatApiError } from '../errors.js';
import { listObjects, objectPath } from '../api-helpers.js';
import { kindPrefix, parseResourceArgs } from '../resources.js';
import { readManifests } from '../manifests.js';
import { targets } from './apply.js';

interface DeleteFlags {
  filename?: string[]; recursive?: boolean; selector?: string; all?: boolean; allNamespaces?: boolean;
  cascade?: string; gracePeriod?: string; force?: boolean; wait?: boolean | string; ignoreNotFound?: boolean; now?: boolean;
  fieldSelector?: string; timeout?: string;
}

export function registerDelete(program: Command, ctx: () => CliContext): void {
  program.command('delete').description('Delete resources by file names, stdin, resources and names, or by resources and label selector')
    .argument('[args...]', 'TYPE [NAME...] | TYPE/NAME ...')
    .option('-f, --filename <path>', 'files, folders or -', (v: string, p: string[] = []) => [...p, v])
    .option('-R, --recursive', 'process folders recursively')
    .option('-l, --selector <selector>', 'label selector')
    .option('--field-selector <selector>', 'field selector')
    .option('--all', 'delete all resources of the types in the namespace')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('--cascade <mode>', 'background|foreground|orphan', 'background')
    .option('--grace-period <seconds>', 'seconds given to the resource to terminate gracefully (-1: the default)', '-1')
    .option('--now', 'grace period 1: immediate shutdown')
    .option('--force', 'immediate deletion (with --grace-period=0)')
    .option('--wait [bool]', 'wait for the resources to be gone (--wait=false: do not)', 'true')
    .option('--timeout <duration>', 'how long to wait for deletion', '0s')
    .option('--ignore-not-found', 'treat not found as success')
    .action(async (args: string[], o: DeleteFlags) => { await runDelete(ctx(), args, o); });
}

const CASCADE: Record<string, string> = { background: 'Background', foreground: 'Foreground', orphan: 'Orphan', true: 'Background', false: 'Orphan' };

export function deleteOptionsBody(o: Pick<DeleteFlags, 'cascade' | 'gracePeriod' | 'force' | 'now'>): Record<string, unknown> {
  const policy = CASCADE[o.cascade ?? 'background'];
  if (!policy) throw new CliError(`error: invalid cascade value (${o.cascade ?? ''}). Must be "background", "foreground", or "orphan"`);
  const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: policy };
  let grace = Number(o.gracePeriod ?? '-1');
  if (o.now) grace = 1;
  if (o.force && grace < 0) grace = 0;
  if (o.force && grace === 0) grace = 0;
  if (grace >= 0) body['gracePeriodSeconds'] = grace === 0 && !o.force ? 1 : grace;
  return body;
}

interface Victim { r: ResourceDescriptor; ns: string | undefined; name: string; uid?: string }

async function runDelete(ctx: CliContext, args: string[], o: DeleteFlags): Promise<void> {
  const victims: Victim[] = [];
  if (o.filename?.length) {
    for (const t of targets(ctx, readManifests(o.filename, o.recursive ? { recursive: true } : {}))) victims.push({ r: t.r, ns: t.ns, name: t.name });
  } else {
    if (!args.length) throw new CliError('error: You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   \'-f rsrc.yaml\'\n   \'--filename=rsrc.json\'\n   \'<resource> <name>\'\n   \'<resource>\'');
    const refs = parseResourceArgs(args);
    for (const ref of refs) {
      const ns = o.allNamespaces ? undefined : ctx.namespace;
      if (ref.names.length) { for (const n of ref.names) victims.push({ r: ref.resource, ns: ctx.namespace, name: n }); continue; }
      if (!o.all && !o.selector && !o.fieldSelector && !o.allNamespaces) throw new CliError('error: resource(s) were provided, but no name was specified');
      const items = await listObjects(ctx.client, ref.resource, ns, { ...(o.selector ? { labelSelector: o.selector } : {}), ...(o.fieldSelector ? { fieldSelector: o.fieldSelector } : {}) });
      for (const it of items) victims.push({ r: ref.resource, ns: it.metadata?.namespace, name: it.metadata!.name!, ...(it.metadata?.uid ? { uid: it.metadata.uid } : {}) });
    }
    if (!victims.length) { ctx.printErr('No resources found\n'); return; }
  }
  const body = deleteOptionsBody(o);
  if (o.force && body['gracePeriodSeconds'] === 0) ctx.printErr('Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n');
  let failed = false;
  const deleted: Victim[] = [];
  for (const v of victims) {
    try {
      const res = await ctx.client.requestJson<{ metadata?: { uid?: string } }>({ method: 'DELETE', path: objectPath(v.r, v.ns, v.name), body });
      if (res?.metadata?.uid) v.uid = res.metadata.uid;
      ctx.print(`${kindPrefix(v.r)} "${v.name}" deleted${v.ns && o.allNamespaces ? ` from ${v.ns} namespace` : ''}\n`);
      deleted.push(v);
    } catch (e) {
      if (isNotFound(e) && o.ignoreNotFound) continue;
      if (!(e instanceof ApiError)) throw e;
      failed = true;
      ctx.printErr(`${formatApiError(e)}\n`);
    }
  }
  if (o.wait !== false && o.wait !== 'false' && deleted.length) await waitGone(ctx, deleted, parseDurationMs(o.timeout ?? '0s'));
  if (failed) process.exitCode = 1;
}

/** Parses Go durations like 30s, 5m, 1h30m; 0 = no limit. */
export function parseDurationMs(s: string): number {
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  let ms = 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let m: RegExpExecArray | null;
  let seen = 0;
  while ((m = re.exec(s))) { seen += m[0].length; ms += Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h']); }
  if (seen !== s.length) throw new CliError(`error: invalid duration "${s}"`);
  return ms;
}

async function waitGone(ctx: CliContext, vs: Victim[], timeoutMs: number): Promise<void> {
  const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
  let pending = [...vs];
  while (pending.length) {
    const still: Victim[] = [];
    for (const v of pending) {
      try {
        const cur = await ctx.client.requestJson<{ metadata?: { uid?: string } }>({ path: objectPath(v.r, v.ns, v.name) });
        // A new object with the same name (a controller recreated it) counts as gone.
        if (!v.uid || cur.metadata?.uid === v.uid) still.push(v);
      } catch (e) { if (!isNotFound(e)) throw e; }
    }
    pending = still;
    if (!pending.length) return;
    if (Date.now() > deadline) throw new CliError(`error: timed out waiting for the condition on ${pending.map((v) => `${kindPrefix(v.r)}/${v.name}`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
