/** `mkctl apply -f` and `mkctl create -f`: kubectl's client-side apply with last-applied. */
import type { Command } from 'commander';
import { ApiError, isNotFound, patchSchemaFor, qualifiedResource, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import { CliError, type CliContext } from '../context.js';
import { formatApiError } from '../errors.js';
import { objectPath } from '../api-helpers.js';
import { descriptorForObject, kindPrefix } from '../resources.js';
import { readManifests, type Manifest } from '../manifests.js';
import { LAST_APPLIED, threeWayMergePatch, withLastApplied } from '../three-way-patch.js';
import { parseOutput, printObjects } from '../printers/output.js';

interface ApplyFlags { filename?: string[]; recursive?: boolean; output?: string; dryRun?: string; serverSide?: boolean; fieldManager?: string; force?: boolean }

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function registerApply(program: Command, ctx: () => CliContext): void {
  program.command('apply').description('Apply a configuration to a resource by file name or stdin')
    .option('-f, --filename <path>', 'files, folders or - (repeatable)', collect)
    .option('-R, --recursive', 'process folders recursively')
    .option('-o, --output <format>', 'yaml|json|name')
    .option('--dry-run <mode>', 'none|client|server', 'none')
    .option('--server-side', 'server-side apply (apply patch)')
    .option('--field-manager <name>', 'field manager', 'kubectl-client-side-apply')
    .option('--force-conflicts', 'server-side apply: take ownership of conflicting fields')
    .action(async (o: ApplyFlags) => { await runApply(ctx(), o); });
  program.command('create').description('Create a resource from a file or from stdin')
    .option('-f, --filename <path>', 'files, folders or - (repeatable)', collect)
    .option('-R, --recursive', 'process folders recursively')
    .option('-o, --output <format>', 'yaml|json|name')
    .option('--dry-run <mode>', 'none|client|server', 'none')
    .option('--save-config', 'record the last-applied annotation')
    .action(async (o: ApplyFlags & { saveConfig?: boolean }) => { await runCreate(ctx(), o); });
}

export interface Target { m: Manifest; r: ResourceDescriptor; ns: string | undefined; name: string }

/** Resolves each manifest's resource and namespace (kubectl's namespace mismatch rule). */
export function targets(ctx: CliContext, ms: Manifest[]): Target[] {
  return ms.map((m) => {
    const r = descriptorForObject(m.object.apiVersion, m.object.kind);
    if (!r) throw new CliError(`error: resource mapping not found for name: "${m.object.metadata?.name ?? ''}" namespace: "${m.object.metadata?.namespace ?? ''}" from "${m.source}": no matches for kind "${m.object.kind}" in version "${m.object.apiVersion}"\nensure CRDs are installed first`);
    const objNs = m.object.metadata?.namespace;
    if (r.namespaced && objNs && ctx.flags.namespace && objNs !== ctx.flags.namespace) {
      throw new CliError(`error: the namespace from the provided object "${objNs}" does not match the namespace "${ctx.flags.namespace}". You must pass '--namespace=${objNs}' to perform this operation.`);
    }
    const ns = r.namespaced ? objNs || ctx.namespace : undefined;
    const name = m.object.metadata?.name;
    if (!name) throw new CliError(`error: error when retrieving current configuration of:\nResource: "${qualifiedResource(r)}", GroupVersionKind: "${m.object.apiVersion}, Kind=${m.object.kind}"\nfrom server for: "${m.source}": resource name may not be empty`);
    if (r.namespaced) m.object.metadata = { ...m.object.metadata, name, namespace: ns! };
    return { m, r, ns, name };
  });
}

function suffix(dry: string | undefined): string {
  return dry === 'client' ? ' (dry run)' : dry === 'server' ? ' (server dry run)' : '';
}

async function runApply(ctx: CliContext, o: ApplyFlags): Promise<void> {
  if (!o.filename?.length) throw new CliError('error: must specify one of -f and -k');
  const ts = targets(ctx, readManifests(o.filename, o.recursive ? { recursive: true } : {}));
  const fmt = o.output ? parseOutput(o.output) : undefined;
  const dryQ: Record<string, string> = o.dryRun === 'server' ? { dryRun: 'All' } : {};
  let failed = false;
  for (const t of ts) {
    const label = `${kindPrefix(t.r)}/${t.name}`;
    try {
      let result: KubeObject | undefined;
      let verb: string;
      if (o.serverSide) {
        result = await ctx.client.requestJson<KubeObject>({ method: 'PATCH', path: objectPath(t.r, t.ns, t.name), query: { ...dryQ, fieldManager: o.fieldManager === 'kubectl-client-side-apply' ? 'kubectl' : o.fieldManager ?? 'kubectl', ...(o.force ? { force: 'true' } : {}) }, body: t.m.object, contentType: 'application/apply-patch+yaml' });
        verb = 'serverside-applied';
      } else {
        const modified = withLastApplied(t.m.object);
        let current: KubeObject | undefined;
        try { current = await ctx.client.requestJson<KubeObject>({ path: objectPath(t.r, t.ns, t.name) }); } catch (e) { if (!isNotFound(e)) throw e; }
        if (!current) {
          if (o.dryRun !== 'client') result = await ctx.client.requestJson<KubeObject>({ method: 'POST', path: objectPath(t.r, t.ns), query: { ...dryQ, fieldManager: o.fieldManager ?? 'kubectl-client-side-apply' }, body: modified });
          else result = modified;
          verb = 'created';
        } else {
          const lastText = current.metadata?.annotations?.[LAST_APPLIED];
          let original: unknown;
          try { original = lastText ? JSON.parse(lastText) : undefined; } catch { original = undefined; }
          if (!lastText) ctx.printErr(`Warning: resource ${qualifiedResource(t.r)}/${t.name} is missing the ${LAST_APPLIED} annotation which is required by mkctl apply. mkctl apply should only be used on resources created declaratively by either mkctl create --save-config or mkctl apply. The missing annotation will be patched automatically.\n`);
          const patch = threeWayMergePatch(original, modified, current, patchSchemaFor(t.r));
          if (Object.keys(patch).length === 0) { verb = 'unchanged'; result = current; } else {
            if (o.dryRun !== 'client') result = await ctx.client.requestJson<KubeObject>({ method: 'PATCH', path: objectPath(t.r, t.ns, t.name), query: { ...dryQ, fieldManager: o.fieldManager ?? 'kubectl-client-side-apply' }, body: patch, contentType: 'application/strategic-merge-patch+json' });
            else result = current;
            verb = 'configured';
          }
        }
      }
      if (fmt && result) ctx.print(printObjects([{ ...result, apiVersion: t.m.object.apiVersion, kind: t.m.object.kind } as KubeObject], fmt, true));
      else ctx.print(`${label} ${verb}${suffix(o.dryRun)}\n`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      failed = true;
      ctx.printErr(`${formatApiError(e, e.reason === 'Invalid' ? undefined : `error when applying patch to "${t.m.source}"`)}\n`);
    }
  }
  if (failed) process.exitCode = 1;
}

async function runCreate(ctx: CliContext, o: ApplyFlags & { saveConfig?: boolean }): Promise<void> {
  if (!o.filename?.length) throw new CliError('error: must specify one of -f and -k');
  const ts = targets(ctx, readManifests(o.filename, o.recursive ? { recursive: true } : {}));
  const fmt = o.output ? parseOutput(o.output) : undefined;
  let failed = false;
  for (const t of ts) {
    try {
      const body = o.saveConfig ? withLastApplied(t.m.object) : t.m.object;
      const result = o.dryRun === 'client' ? body : await ctx.client.requestJson<KubeObject>({ method: 'POST', path: objectPath(t.r, t.ns), query: { ...(o.dryRun === 'server' ? { dryRun: 'All' } : {}), fieldManager: 'kubectl-create' }, body });
      if (fmt) ctx.print(printObjects([{ ...result, apiVersion: t.m.object.apiVersion, kind: t.m.object.kind } as KubeObject], fmt, true));
      else ctx.print(`${kindPrefix(t.r)}/${t.name} created${suffix(o.dryRun)}\n`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      failed = true;
      ctx.printErr(`${formatApiError(e, e.reason === 'Invalid' ? undefined : `error when creating "${t.m.source}"`)}\n`);
    }
  }
  if (failed) process.exitCode = 1;
}
