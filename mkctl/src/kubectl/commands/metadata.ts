/** `label`, `annotate` and `patch`. */
import type { Command } from 'commander';
import yaml from 'js-yaml';
import type { KubeObject } from '@mk8s/api';
import { CliError, type CliContext } from '../context.js';
import { getObject, listObjects, objectPath } from '../api-helpers.js';
import { kindPrefix, parseResourceArgs } from '../resources.js';

/** Splits `k=v` and `k-` arguments (kubectl's parseLabels), rejecting bad ones. */
export function parseKeyValueArgs(args: string[]): { set: Record<string, string>; remove: string[] } {
  const set: Record<string, string> = {}; const remove: string[] = [];
  for (const a of args) {
    if (a.endsWith('-') && !a.includes('=')) remove.push(a.slice(0, -1));
    else {
      const i = a.indexOf('=');
      if (i <= 0) throw new CliError(`error: invalid label spec: ${a}, it should be like key=value or key-`);
      set[a.slice(0, i)] = a.slice(i + 1);
    }
  }
  return { set, remove };
}

function splitArgs(args: string[]): { resources: string[]; pairs: string[] } {
  const firstPair = args.findIndex((a) => a.includes('=') || (a.endsWith('-') && a.length > 1));
  return firstPair < 0 ? { resources: args, pairs: [] } : { resources: args.slice(0, firstPair), pairs: args.slice(firstPair) };
}

export function registerMetadata(program: Command, ctx: () => CliContext): void {
  for (const [cmd, field, past] of [['label', 'labels', 'labeled'], ['annotate', 'annotations', 'annotated']] as const) {
    program.command(cmd).description(`Update the ${field} on a resource`)
      .argument('<args...>', `TYPE NAME KEY_1=VAL_1 ... KEY_N-`)
      .option('--overwrite', 'allow replacing existing values')
      .option('--all', 'all resources of the type in the namespace')
      .option('-l, --selector <selector>', 'label selector')
      .action(async (args: string[], o: { overwrite?: boolean; all?: boolean; selector?: string }) => {
        const c = ctx();
        const { resources, pairs } = splitArgs(args);
        if (!pairs.length) throw new CliError(`error: at least one ${cmd === 'label' ? 'label' : 'annotation'} update is required`);
        const { set, remove } = parseKeyValueArgs(pairs);
        for (const ref of parseResourceArgs(resources)) {
          const objs: KubeObject[] = ref.names.length
            ? await Promise.all(ref.names.map((n) => getObject(c.client, ref.resource, c.namespace, n)))
            : (o.all || o.selector) ? await listObjects(c.client, ref.resource, c.namespace, o.selector ? { labelSelector: o.selector } : {})
              : (() => { throw new CliError('error: resource(s) were provided, but no name was specified'); })();
          for (const obj of objs) {
            const cur = (obj.metadata?.[field] ?? {}) as Record<string, string>;
            if (!o.overwrite) for (const k of Object.keys(set)) if (k in cur && cur[k] !== set[k]) throw new CliError(`error: '${k}' already has a value (${cur[k]}), and --overwrite is false`);
            const patch: Record<string, string | null> = { ...set };
            for (const k of remove) patch[k] = null;
            const unchanged = Object.entries(set).every(([k, v]) => cur[k] === v) && remove.every((k) => !(k in cur));
            const name = obj.metadata!.name!;
            if (!unchanged) await c.client.requestJson({ method: 'PATCH', path: objectPath(ref.resource, obj.metadata?.namespace ?? c.namespace, name), body: { metadata: { [field]: patch } }, contentType: 'application/merge-patch+json' });
            c.print(`${kindPrefix(ref.resource)}/${name} ${unchanged ? `not ${past}` : past}\n`);
          }
        }
      });
  }
  program.command('patch').description('Update fields of a resource using strategic merge patch, a JSON merge patch, or a JSON patch')
    .argument('<args...>', 'TYPE NAME | TYPE/NAME')
    .requiredOption('-p, --patch <patch>', 'the patch (JSON or YAML)')
    .option('--type <type>', 'json|merge|strategic', 'strategic')
    .option('--subresource <name>', 'status|scale')
    .action(async (args: string[], o: { patch: string; type: string; subresource?: string }) => {
      const c = ctx();
      const types: Record<string, string> = { json: 'application/json-patch+json', merge: 'application/merge-patch+json', strategic: 'application/strategic-merge-patch+json' };
      const ct = types[o.type];
      if (!ct) throw new CliError(`error: --type must be one of [json merge strategic], not "${o.type}"`);
      let body: unknown;
      try { body = yaml.load(o.patch); } catch (e) { throw new CliError(`error: unable to parse "${o.patch}": ${e instanceof Error ? e.message.split('\n')[0]! : String(e)}`); }
      for (const ref of parseResourceArgs(args)) {
        for (const name of ref.names) {
          const path = objectPath(ref.resource, c.namespace, name) + (o.subresource ? `/${o.subresource}` : '');
          const before = await c.client.requestJson<KubeObject>({ path });
          const after = await c.client.requestJson<KubeObject>({ method: 'PATCH', path, body, contentType: ct });
          const same = before.metadata?.resourceVersion === after.metadata?.resourceVersion;
          c.print(`${kindPrefix(ref.resource)}/${name} patched${same ? ' (no change)' : ''}\n`);
        }
      }
    });
}
