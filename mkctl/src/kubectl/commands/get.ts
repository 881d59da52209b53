/** `mkctl get`: server-side Tables printed like kubectl, or whole objects with -o. */
import type { Command } from 'commander';
import { ApiError, type KubeObject } from '@mk8s/api';
import type { CliContext } from '../context.js';
import { CliError } from '../context.js';
import { formatApiError } from '../errors.js';
import { getObject, getTable, listObjects, objectPath, TABLE_ACCEPT, type Selection } from '../api-helpers.js';
import { kindPrefix, parseResourceArgs, type ResourceRef } from '../resources.js';
import { parseOutput, printObjects, type OutputFormat } from '../printers/output.js';
import { tableLines, WatchTableWriter, type Table } from '../printers/table.js';
import { tabwrite } from '../printers/tabwriter.js';
import type { WatchEvent } from '@mk8s/api';
import { decodeWatchEvents } from '@mk8s/client';

export interface GetOptions {
  output?: string;
  allNamespaces?: boolean;
  selector?: string;
  fieldSelector?: string;
  showLabels?: boolean;
  watch?: boolean;
  watchOnly?: boolean;
  noHeaders?: boolean;
  labelColumns?: string[];
  ignoreNotFound?: boolean;
}

export function registerGet(program: Command, ctx: () => CliContext): void {
  program.command('get')
    .description('Display one or many resources')
    .argument('[args...]', 'TYPE[.VERSION][.GROUP] [NAME...] | TYPE/NAME ...')
    .option('-o, --output <format>', 'json|yaml|wide|name|jsonpath=...|custom-columns=...')
    .option('-A, --all-namespaces', 'list across all namespaces')
    .option('-l, --selector <selector>', 'label selector (=, ==, !=, in, notin, exists)')
    .option('--field-selector <selector>', 'field selector')
    .option('--show-labels', 'show all labels as the last column')
    .option('-L, --label-columns <labels>', 'labels to show as columns', (v: string, prev: string[] = []) => [...prev, ...v.split(',')])
    .option('-w, --watch', 'after listing, watch for changes')
    .option('--watch-only', 'watch for changes without listing first')
    .option('--no-headers', 'omit headers')
    .option('--ignore-not-found', 'treat not found as success')
    .action(async (args: string[], o: GetOptions & { headers?: boolean }) => {
      if (o.headers === false) o.noHeaders = true;
      await runGet(ctx(), args, o);
    });
}

export async function runGet(ctx: CliContext, args: string[], o: GetOptions): Promise<void> {
  if (args.length === 0) throw new CliError('error: you must specify the type of resource to get. Use "mkctl api-resources" for a complete list of supported resources.');
  const refs = parseResourceArgs(args);
  const fmt = parseOutput(o.output);
  const ns = o.allNamespaces ? undefined : ctx.namespace;
  const sel: Selection = {};
  if (o.selector) sel.labelSelector = o.selector;
  if (o.fieldSelector) sel.fieldSelector = o.fieldSelector;
  const multiKind = refs.length > 1 || args[0]!.split(',').some((w) => w.toLowerCase() === 'all');
  if (o.watch || o.watchOnly) {
    if (refs.length !== 1) throw new CliError('error: you may only specify a single resource type');
    return watchGet(ctx, refs[0]!, ns, sel, fmt, o);
  }
  let failed = false;
  const named = refs.some((r) => r.names.length > 0);
  if (fmt.kind !== 'table') {
    const objs: KubeObject[] = [];
    for (const ref of refs) {
      if (ref.names.length) {
        for (const n of ref.names) {
          try { objs.push(await getObject(ctx.client, ref.resource, ns ?? ctx.namespace, n)); } catch (e) {
            if (!(e instanceof ApiError) || (e.reason === 'NotFound' && o.ignoreNotFound)) { if (e instanceof ApiError) continue; throw e; }
            ctx.printErr(`${formatApiError(e)}\n`); failed = true;
          }
        }
      } else objs.push(...await listObjects(ctx.client, ref.resource, ns, sel));
    }
    const single = named && refs.length === 1 && refs[0]!.names.length === 1;
    if (objs.length || fmt.kind === 'yaml' || fmt.kind === 'json') {
      if (objs.length || !single) ctx.print(printObjects(objs, fmt, single));
    }
    if (!objs.length && !named && fmt.kind !== 'yaml' && fmt.kind !== 'json') ctx.printErr(noneFound(ns));
    if (failed) process.exitCode = 1;
    return;
  }
  const chunks: string[] = [];
  for (const ref of refs) {
    const tables: Table[] = [];
    if (ref.names.length) {
      for (const n of ref.names) {
        try { tables.push(await getTable(ctx.client, ref.resource, ns ?? ctx.namespace, n)); } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          if (e.reason === 'NotFound' && o.ignoreNotFound) continue;
          ctx.printErr(`${formatApiError(e)}\n`); failed = true;
        }
      }
    } else tables.push(await getTable(ctx.client, ref.resource, ns, undefined, sel));
    const merged: Table = { columnDefinitions: tables[0]?.columnDefinitions ?? [], rows: tables.flatMap((t) => t.rows ?? []) };
    if (!merged.rows!.length) continue;
    const lines = tableLines(merged, {
      wide: fmt.wide, withNamespace: !!o.allNamespaces && ref.resource.namespaced, showLabels: !!o.showLabels,
      noHeaders: !!o.noHeaders, ...(multiKind ? { kindPrefix: kindPrefix(ref.resource) } : {}),
      ...(o.labelColumns ? { labelColumns: o.labelColumns } : {}),
    });
    chunks.push(lines.join('\n'));
  }
  if (chunks.length) ctx.print(tabwrite(`${chunks.join('\n\n')}\n`));
  else if (!named) ctx.printErr(noneFound(ns));
  if (failed) process.exitCode = 1;
}

function noneFound(ns: string | undefined): string {
  return ns === undefined ? 'No resources found\n' : `No resources found in ${ns} namespace.\n`;
}

async function watchGet(ctx: CliContext, ref: ResourceRef, ns: string | undefined, sel: Selection, fmt: OutputFormat, o: GetOptions): Promise<void> {
  const r = ref.resource;
  const query: Record<string, string> = { watch: 'true', allowWatchBookmarks: 'false' };
  if (sel.labelSelector) query['labelSelector'] = sel.labelSelector;
  if (sel.fieldSelector) query['fieldSelector'] = sel.fieldSelector;
  if (ref.names.length === 1) query['fieldSelector'] = `metadata.name=${ref.names[0]!}`;
  const table = fmt.kind === 'table';
  const tw = new WatchTableWriter();
  const tOpts = { wide: table && fmt.wide, withNamespace: !!o.allNamespaces && r.namespaced, showLabels: !!o.showLabels };
  let printedHeader = false;
  let cols: Table['columnDefinitions'] = [];
  if (!o.watchOnly) {
    if (table) {
      const t = await getTable(ctx.client, r, ns, ref.names[0], ref.names[0] ? {} : sel);
      cols = t.columnDefinitions ?? [];
      if (t.rows?.length) { ctx.print(tw.format(tableLines(t, tOpts))); printedHeader = true; }
      else ctx.printErr(noneFound(ns));
      query['resourceVersion'] = (t as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? '';
    } else {
      const list = await ctx.client.requestJson<{ metadata?: { resourceVersion?: string }; items?: KubeObject[] }>({ path: objectPath(r, ns), query: { ...(query['fieldSelector'] ? { fieldSelector: query['fieldSelector'] } : {}), ...(sel.labelSelector ? { labelSelector: sel.labelSelector } : {}) } });
      for (const it of list.items ?? []) ctx.print(printObjects([{ ...it, apiVersion: r.group ? `${r.group}/${r.version}` : r.version, kind: r.kind }], fmt, true));
      query['resourceVersion'] = list.metadata?.resourceVersion ?? '';
    }
  }
  const res = await ctx.client.requestRaw({ path: objectPath(r, ns), query, stream: true, headers: table ? { accept: TABLE_ACCEPT } : {} });
  for await (const ev of decodeWatchEvents(res.body) as AsyncIterable<WatchEvent<KubeObject>>) {
    if (ev.type === 'BOOKMARK') continue;
    if (ev.type === 'ERROR') throw new CliError(`error: ${(ev.object as { message?: string }).message ?? 'watch failed'}`);
    if (table) {
      const t = ev.object as unknown as Table;
      // The server sends column definitions only with the first event of a watch.
      if (t.columnDefinitions?.length) cols = t.columnDefinitions;
      const lines = tableLines({ ...t, columnDefinitions: cols }, { ...tOpts, noHeaders: printedHeader || !!o.noHeaders });
      printedHeader = true;
      ctx.print(tw.format(lines));
    } else ctx.print(printObjects([ev.object], fmt, true));
  }
}
