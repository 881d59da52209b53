/** `events`, `explain`, `config`, `completion`, `api-resources`, `version`. */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import yaml from 'js-yaml';
import { RESOURCES, apiVersionOf, Events as EventsR, type KubeObject } from '@mk8s/api';
import { kubeconfigPaths } from '@mk8s/client';
import type * as core from 'kubernetes-types/core/v1.js';
import { CliError, type CliContext } from '../context.js';
import { listObjects, objectPath } from '../api-helpers.js';
import { resolveResource } from '../resources.js';
import { tabwrite } from '../printers/tabwriter.js';
import { humanDuration } from '@mk8s/api';
import { parseOutput, printObjects } from '../printers/output.js';

type Ev = core.Event & KubeObject;
const evTime = (e: Ev, which: 'last' | 'first') => Date.parse((which === 'last' ? e.lastTimestamp : e.firstTimestamp) || e.eventTime || e.metadata?.creationTimestamp || '') || 0;

/** The `kubectl events` table lines (tab separated), oldest first. */
export function eventLines(events: Ev[], now: number, withNamespace: boolean, noHeaders = false): string[] {
  const sorted = [...events].sort((a, b) => evTime(a, 'last') - evTime(b, 'last'));
  const lines = noHeaders ? [] : [`${withNamespace ? 'NAMESPACE\t' : ''}LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE`];
  for (const e of sorted) {
    const last = humanDuration(now - evTime(e, 'last'));
    const seen = (e.count ?? 0) > 1 ? `${last} (x${e.count} over ${humanDuration(now - evTime(e, 'first'))})` : last;
    const obj = `${e.involvedObject.kind ?? ''}/${e.involvedObject.name ?? ''}`;
    lines.push(`${withNamespace ? `${e.metadata?.namespace ?? ''}\t` : ''}${seen}\t${e.type ?? ''}\t${e.reason ?? ''}\t${obj}\t${(e.message ?? '').trim()}`);
  }
  return lines;
}

/** Greedy word wrap as kubectl explain prints descriptions (76 columns after a 4-space indent). */
export function wrap(text: string, width = 76): string[] {
  const out: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (const word of para.split(/ +/)) {
      if (line && line.length + 1 + word.length > width) { out.push(line); line = word; } else line = line ? `${line} ${word}` : word;
    }
    out.push(line);
  }
  return out;
}

interface Schema { type?: string; description?: string; properties?: Record<string, Schema>; items?: Schema; allOf?: Schema[]; $ref?: string; required?: string[]; additionalProperties?: Schema; 'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[] }

function typeName(s: Schema, resolve: (ref: string) => Schema | undefined): string {
  const ref = s.$ref ?? s.allOf?.[0]?.$ref;
  if (ref) return ref.split('.').at(-1)!;
  if (s.type === 'array' && s.items) return `[]${typeName(s.items, resolve)}`;
  if (s.type === 'object' && s.additionalProperties) return `map[string]${typeName(s.additionalProperties, resolve)}`;
  return s.type ?? 'Object';
}

export function registerMisc(program: Command, ctx: () => CliContext): void {
  program.command('events').description('List events')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('--for <object>', 'only events about TYPE/NAME')
    .option('--types <types>', 'comma-separated event types (Normal,Warning)')
    .option('-w, --watch', 'watch for new events')
    .option('-o, --output <format>', 'yaml|json|name')
    .action(async (o: { allNamespaces?: boolean; for?: string; types?: string; watch?: boolean; output?: string }) => {
      const c = ctx();
      const ns = o.allNamespaces ? undefined : c.namespace;
      const filters: string[] = [];
      if (o.for) {
        const i = o.for.indexOf('/');
        if (i < 0) throw new CliError(`error: --for must be in resource/name form`);
        filters.push(`involvedObject.kind=${resolveResource(o.for.slice(0, i)).kind}`, `involvedObject.name=${o.for.slice(i + 1)}`);
      }
      const types = o.types?.split(',').map((t) => t.trim().toLowerCase());
      const keep = (e: Ev) => !types || types.includes((e.type ?? '').toLowerCase());
      const evs = (await listObjects<Ev>(c.client, EventsR, ns, filters.length ? { fieldSelector: filters.join(',') } : {})).filter(keep);
      if (o.output) { c.print(printObjects(evs, parseOutput(o.output), false)); return; }
      if (!evs.length && !o.watch) { c.printErr(ns ? `No events found in ${ns} namespace.\n` : 'No events found.\n'); return; }
      if (evs.length) c.print(tabwrite(`${eventLines(evs, Date.now(), !ns).join('\n')}\n`));
      if (o.watch) {
        for await (const ev of c.client.resource<Ev>(EventsR, ns).watch({ resourceVersion: '0', ...(filters.length ? { fieldSelector: filters.join(',') } : {}) })) {
          if ((ev.type === 'ADDED' || ev.type === 'MODIFIED') && keep(ev.object)) c.print(tabwrite(`${eventLines([ev.object], Date.now(), !ns, true).join('\n')}\n`));
        }
      }
    });

  program.command('explain').description('Get documentation for a resource').argument('<path>', 'TYPE[.FIELD...]')
    .option('--recursive', 'print the fields of fields')
    .action(async (path: string, o: { recursive?: boolean }) => {
      const c = ctx();
      const [word, ...fields] = path.split('.');
      const r = resolveResource(word!);
      const gv = r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`;
      const doc = await c.client.requestJson<{ components?: { schemas?: Record<string, Schema> } }>({ path: `/openapi/v3/${gv}` });
      const schemas = doc.components?.schemas ?? {};
      const resolve = (ref: string) => schemas[ref.replace('#/components/schemas/', '')];
      const deref = (s: Schema | undefined): Schema | undefined => {
        let cur = s;
        for (let i = 0; cur && i < 5; i++) {
          const ref = cur.$ref ?? (cur.allOf?.length === 1 ? cur.allOf[0]!.$ref : undefined);
          if (!ref) break;
          const target = resolve(ref);
          cur = target ? { ...target, ...((cur.description ?? target.description) !== undefined ? { description: (cur.description ?? target.description)! } : {}) } : undefined;
        }
        return cur;
      };
      let schema: Schema | undefined = Object.values(schemas).find((s) => s['x-kubernetes-group-version-kind']?.some((g) => g.group === r.group && g.version === r.version && g.kind === r.kind));
      if (!schema) throw new CliError(`error: couldn't find resource for "${apiVersionOf(r)}, Kind=${r.kind}"`);
      let fieldName = '';
      let fieldType = '';
      for (const f of fields) {
        const base: Schema = deref(schema)!;
        const target: Schema | undefined = base.type === 'array' ? deref(base.items) : base;
        const prop: Schema | undefined = target?.properties?.[f];
        if (!prop) throw new CliError(`error: field "${f}" does not exist`);
        fieldName = f; fieldType = typeName(prop, resolve);
        schema = prop;
      }
      const outer: Schema = schema;
      let body = deref(schema)!;
      if (body.type === 'array' && body.items) body = { ...deref(body.items)!, description: `${outer.description ?? ''}\n${deref(body.items)?.description ?? ''}`.trim() };
      const out: string[] = [];
      if (r.group) out.push(`GROUP:      ${r.group}`);
      out.push(`KIND:       ${r.kind}`, `VERSION:    ${r.version}`, '');
      if (fieldName) out.push(`FIELD: ${fieldName} <${fieldType}>`, '', '');
      out.push('DESCRIPTION:');
      const desc = fields.length ? [outer.description, deref(outer.items ?? outer)?.description !== outer.description ? deref(outer.items ?? outer)?.description : undefined].filter(Boolean).join('\n') : body.description ?? '';
      for (const l of wrap(desc || '<empty>')) out.push(`    ${l}`);
      out.push('    ');
      const props = body.properties ?? {};
      if (Object.keys(props).length) {
        out.push('FIELDS:');
        const printFields = (p: Record<string, Schema>, required: string[], depth: number, seen: Set<Schema>) => {
          for (const k of Object.keys(p).sort()) {
            const s = p[k]!;
            out.push(`${'  '.repeat(depth + 1)}${k}\t<${typeName(s, resolve)}>${required.includes(k) ? ' -required-' : ''}`);
            if (o.recursive) {
              const d = deref(s.type === 'array' ? s.items : s);
              if (d?.properties && !seen.has(d)) printFields(d.properties, d.required ?? [], depth + 1, new Set([...seen, d]));
            } else {
              for (const l of wrap(s.description ?? '')) out.push(`    ${l}`);
              out.push('');
            }
          }
        };
        printFields(props, body.required ?? [], 0, new Set());
      }
      c.print(`${out.join('\n')}\n`);
    });

  program.command('api-resources').description('Print the supported API resources').action(() => {
    const lines = ['NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND', ...RESOURCES.map((r) => `${r.resource}\t${r.shortNames.join(',')}\t${apiVersionOf(r)}\t${r.namespaced}\t${r.kind}`)];
    ctx().print(tabwrite(`${lines.join('\n')}\n`));
  });

  program.command('version').description('Print the client and server version').action(async () => {
    const c = ctx();
    c.print('Client Version: v1.32.0-mk8s\n');
    const v = await c.client.requestJson<{ gitVersion?: string }>({ path: '/version' });
    c.print(`Server Version: ${v.gitVersion ?? 'unknown'}\n`);
  });

  const config = program.command('config').description('Modify kubeconfig files');
  config.command('view').description('Display merged kubeconfig settings').option('--minify', 'only the current context')
    .option('-o, --output <format>', 'yaml|json', 'yaml')
    .action((o: { minify?: boolean; output: string }) => {
      const c = ctx();
      const kc = c.kubeconfig();
      const cur = c.flags.context ?? kc['current-context'];
      const ctxs = o.minify ? kc.contexts.filter((x) => x.name === cur) : kc.contexts;
      const clusters = o.minify ? kc.clusters.filter((x) => ctxs.some((cc) => cc.context.cluster === x.name)) : kc.clusters;
      const users = (o.minify ? kc.users.filter((x) => ctxs.some((cc) => cc.context.user === x.name)) : kc.users).map((u) => ({
        name: u.name,
        user: Object.fromEntries(Object.entries(u.user).map(([k, v]) => [k, /data$|token|password/.test(k) ? 'REDACTED' : v])),
      }));
      const view = { apiVersion: 'v1', clusters, contexts: ctxs, 'current-context': cur ?? '', kind: 'Config', preferences: {}, users };
      c.print(o.output === 'json' ? `${JSON.stringify(view, null, 4)}\n` : yaml.dump(view, { noArrayIndent: true, lineWidth: -1 }));
    });
  config.command('get-contexts').description('Describe one or many contexts').argument('[name]').option('-o, --output <format>', 'name')
    .action((name: string | undefined, o: { output?: string }) => {
      const c = ctx();
      const kc = c.kubeconfig();
      const list = kc.contexts.filter((x) => !name || x.name === name);
      if (name && !list.length) throw new CliError(`error: context ${name} not found`);
      if (o.output === 'name') { c.print(list.map((x) => `${x.name}\n`).join('')); return; }
      const lines = ['CURRENT\tNAME\tCLUSTER\tAUTHINFO\tNAMESPACE', ...list.map((x) => `${x.name === kc['current-context'] ? '*' : ''}\t${x.name}\t${x.context.cluster}\t${x.context.user ?? ''}\t${x.context.namespace ?? ''}`)];
      c.print(tabwrite(`${lines.join('\n')}\n`));
    });
  config.command('current-context').description('Display the current-context').action(() => {
    const kc = ctx().kubeconfig();
    if (!kc['current-context']) throw new CliError('error: current-context is not set');
    ctx().print(`${kc['current-context']}\n`);
  });
  config.command('use-context').argument('<name>').description('Set the current-context in a kubeconfig file').action((name: string) => {
    const c = ctx();
    const kc = c.kubeconfig();
    if (!kc.contexts.some((x) => x.name === name)) throw new CliError(`error: no context exists with the name: "${name}"`);
    const file = kc.path ?? kubeconfigPaths(c.flags.kubeconfig)[0]!;
    const doc = (yaml.load(readText(file)) ?? {}) as Record<string, unknown>;
    doc['current-context'] = name;
    writeFileSync(file, yaml.dump(doc, { noArrayIndent: true, lineWidth: -1 }));
    c.print(`Switched to context "${name}".\n`);
  });
  config.command('set-context').argument('[name]').description('Set a context entry (only --namespace, with --current)')
    .option('--current', 'modify the current context').option('--namespace <ns>', 'the namespace')
    .action((name: string | undefined, o: { current?: boolean; namespace?: string }) => {
      const c = ctx();
      const kc = c.kubeconfig();
      const target = o.current ? kc['current-context'] : name;
      const file = kc.path ?? kubeconfigPaths(c.flags.kubeconfig)[0]!;
      const doc = (yaml.load(readText(file)) ?? {}) as { contexts?: { name: string; context: Record<string, string> }[] };
      const entry = doc.contexts?.find((x) => x.name === target);
      if (!entry) throw new CliError(`error: no context exists with the name: "${target ?? ''}"`);
      if (o.namespace !== undefined) entry.context['namespace'] = o.namespace;
      writeFileSync(file, yaml.dump(doc, { noArrayIndent: true, lineWidth: -1 }));
      c.print(`Context "${target ?? ''}" modified.\n`);
    });

  program.command('completion').argument('<shell>', 'bash|zsh').description('Output shell completion code')
    .action((shell: string) => {
      const cmds = program.commands.map((x) => x.name()).filter((n) => n !== 'completion');
      const types = RESOURCES.flatMap((r) => [r.resource, ...r.shortNames]).join(' ');
      const bash = `# mkctl bash completion: source <(mkctl completion bash)
_mkctl() {
  local cur prev words cword
  cur="\${COMP_WORDS[COMP_CWORD]}"; prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then COMPREPLY=( $(compgen -W "${cmds.join(' ')}" -- "$cur") ); return; fi
  case "$prev" in
    -n|--namespace) COMPREPLY=( $(compgen -W "$(mkctl get namespaces -o jsonpath='{.items[*].metadata.name}' 2>/dev/null)" -- "$cur") ); return;;
    -o|--output) COMPREPLY=( $(compgen -W "wide yaml json name jsonpath= custom-columns=" -- "$cur") ); return;;
  esac
  if [ "$COMP_CWORD" -eq 2 ]; then
    case "\${COMP_WORDS[1]}" in
      get|describe|delete|label|annotate|patch|scale|explain) COMPREPLY=( $(compgen -W "${types} all" -- "$cur") ); return;;
      logs|exec) COMPREPLY=( $(compgen -W "$(mkctl get pods -o jsonpath='{.items[*].metadata.name}' 2>/dev/null)" -- "$cur") ); return;;
      cordon|uncordon|drain) COMPREPLY=( $(compgen -W "$(mkctl get nodes -o jsonpath='{.items[*].metadata.name}' 2>/dev/null)" -- "$cur") ); return;;
      rollout) COMPREPLY=( $(compgen -W "status history undo restart pause resume" -- "$cur") ); return;;
      config) COMPREPLY=( $(compgen -W "view get-contexts current-context use-context set-context" -- "$cur") ); return;;
      cluster) COMPREPLY=( $(compgen -W "up down status" -- "$cur") ); return;;
      trace) COMPREPLY=( $(compgen -W "pod/ deployment/ service/ replicaset/" -- "$cur") ); compopt -o nospace; return;;
      doctor) COMPREPLY=( $(compgen -W "network" -- "$cur") ); return;;
    esac
  fi
  if [ "$COMP_CWORD" -eq 3 ]; then
    case "\${COMP_WORDS[1]}" in
      get|describe|delete|label|annotate|patch|scale) COMPREPLY=( $(compgen -W "$(mkctl get "\${COMP_WORDS[2]}" -o jsonpath='{.items[*].metadata.name}' 2>/dev/null)" -- "$cur") ); return;;
      use-context) COMPREPLY=( $(compgen -W "$(mkctl config get-contexts -o name 2>/dev/null)" -- "$cur") ); return;;
    esac
  fi
}
complete -F _mkctl mkctl
`;
      if (shell === 'bash') ctx().print(bash);
      else if (shell === 'zsh') ctx().print(`#compdef mkctl\n# mkctl zsh completion: source <(mkctl completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n${bash}`);
      else throw new CliError(`error: Unsupported shell type "${shell}".`);
    });
  void objectPath;
}

import { readFileSync } from 'node:fs';
function readText(p: string): string { return readFileSync(p, 'utf8'); }
