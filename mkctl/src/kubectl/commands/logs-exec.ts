/** `mkctl logs` (pods/log, follow streams) and `mkctl exec` (pods/exec over WebSocket, real TTY). */
import type { Command } from 'commander';
import { Pods, type KubeObject } from '@mk8s/api';
import { execInPod } from '@mk8s/client';
import type * as core from 'kubernetes-types/core/v1.js';
import { CliError, type CliContext } from '../context.js';
import { getObject, listObjects, objectPath } from '../api-helpers.js';
import { resolveResource } from '../resources.js';

/** Resolves `pod`, `pod/name`, `deploy/name`... to one pod (kubectl's AttachablePodForObject). */
export async function podFor(ctx: CliContext, arg: string): Promise<core.Pod & KubeObject> {
  const i = arg.indexOf('/');
  if (i < 0) return getObject<core.Pod & KubeObject>(ctx.client, Pods, ctx.namespace, arg);
  const r = resolveResource(arg.slice(0, i));
  const name = arg.slice(i + 1);
  if (r.kind === 'Pod') return getObject<core.Pod & KubeObject>(ctx.client, Pods, ctx.namespace, name);
  const owner = await getObject<KubeObject & { spec?: { selector?: { matchLabels?: Record<string, string> } | Record<string, string> } }>(ctx.client, r, ctx.namespace, name);
  const sel = owner.spec?.selector as { matchLabels?: Record<string, string> } & Record<string, unknown> | undefined;
  const labels = (sel?.matchLabels ?? (r.kind === 'Service' ? sel : undefined) ?? {}) as Record<string, string>;
  const selector = Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');
  const pods = (await listObjects<core.Pod & KubeObject>(ctx.client, Pods, ctx.namespace, { labelSelector: selector }))
    .filter((p) => !p.metadata?.deletionTimestamp)
    .sort((a, b) => Number(b.status?.phase === 'Running') - Number(a.status?.phase === 'Running') || String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)));
  if (!pods.length) throw new CliError(`error: no pods found for ${arg}`);
  if (pods.length > 1) ctx.printErr(`Found ${pods.length} pods, using pod/${pods[0]!.metadata!.name!}\n`);
  return pods[0]!;
}

function defaultContainer(ctx: CliContext, pod: core.Pod, requested: string | undefined): string {
  const cs = pod.spec?.containers ?? [];
  if (requested) {
    if (![...cs, ...(pod.spec?.initContainers ?? [])].some((c) => c.name === requested)) throw new CliError(`error: container ${requested} is not valid for pod ${pod.metadata?.name ?? ''}`);
    return requested;
  }
  const annotated = pod.metadata?.annotations?.['kubectl.kubernetes.io/default-container'];
  if (annotated && cs.some((c) => c.name === annotated)) return annotated;
  if (cs.length > 1) ctx.printErr(`Defaulted container "${cs[0]!.name}" out of: ${cs.map((c) => c.name).join(', ')}\n`);
  return cs[0]?.name ?? '';
}

interface LogFlags { follow?: boolean; previous?: boolean; container?: string; tail?: string; timestamps?: boolean; since?: string; allContainers?: boolean }

export function registerLogsExec(program: Command, ctx: () => CliContext): void {
  program.command('logs').description('Print the logs for a container in a pod')
    .argument('<pod>', 'POD | TYPE/NAME')
    .argument('[container]', 'container name')
    .option('-f, --follow', 'stream the logs')
    .option('-p, --previous', 'logs of the previous terminated container instance')
    .option('-c, --container <name>', 'container name')
    .option('--tail <n>', 'lines of recent log to show (-1: all)', '-1')
    .option('--timestamps', 'include timestamps on each line')
    .option('--since <duration>', 'only logs newer than a relative duration like 5s, 2m, 3h')
    .action(async (pod: string, container: string | undefined, o: LogFlags) => { await runLogs(ctx(), pod, container ?? o.container, o); });

  program.command('exec').description('Execute a command in a container')
    .argument('<pod>', 'POD | TYPE/NAME')
    .argument('[command...]', 'command and arguments (after --)')
    .option('-c, --container <name>', 'container name')
    .option('-i, --stdin', 'pass stdin to the container')
    .option('-t, --tty', 'stdin is a TTY')
    .option('-q, --quiet', 'only print output from the remote session')
    .action(async (pod: string, command: string[], o: { container?: string; stdin?: boolean; tty?: boolean; quiet?: boolean }) => { await runExec(ctx(), pod, command, o); });
}

async function runLogs(ctx: CliContext, podArg: string, container: string | undefined, o: LogFlags): Promise<void> {
  const pod = await podFor(ctx, podArg);
  const c = defaultContainer(ctx, pod, container);
  const query: Record<string, string> = { container: c };
  if (o.follow) query['follow'] = 'true';
  if (o.previous) query['previous'] = 'true';
  if (o.timestamps) query['timestamps'] = 'true';
  if (o.tail !== undefined && Number(o.tail) >= 0) query['tailLines'] = String(Number(o.tail));
  if (o.since) {
    const m = /^(\d+)(s|m|h)$/.exec(o.since);
    if (!m) throw new CliError(`error: invalid argument "${o.since}" for "--since" flag: time: invalid duration "${o.since}"`);
    query['sinceSeconds'] = String(Number(m[1]) * ({ s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h']));
  }
  const path = `${objectPath(Pods, pod.metadata?.namespace, pod.metadata?.name)}/log`;
  if (o.follow) {
    for await (const chunk of ctx.client.streamRaw(path, { query })) ctx.print(chunk);
  } else ctx.print(await ctx.client.getRaw(path, { query }));
}

async function* stdinChunks(stream: NodeJS.ReadableStream): AsyncGenerator<Uint8Array> {
  for await (const chunk of stream) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk as Uint8Array;
}

async function runExec(ctx: CliContext, podArg: string, command: string[], o: { container?: string; stdin?: boolean; tty?: boolean; quiet?: boolean }): Promise<void> {
  if (!command.length) throw new CliError('error: you must specify at least one command for the container');
  const pod = await podFor(ctx, podArg);
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') throw new CliError(`error: cannot exec into a container in a completed pod; current phase is ${pod.status.phase}`);
  const c = defaultContainer(ctx, pod, o.container);
  const input = ctx.streams.in;
  let tty = !!o.tty;
  if (tty && !(o.stdin && input.isTTY)) {
    if (!o.quiet) ctx.printErr('Unable to use a TTY - input is not a terminal or the right kind of file\n');
    tty = false;
  }
  const raw = tty && typeof input.setRawMode === 'function';
  if (raw) input.setRawMode!(true);
  try {
    const res = await execInPod(ctx.client, {
      namespace: pod.metadata?.namespace ?? ctx.namespace, name: pod.metadata!.name!, container: c, command, tty,
      ...(o.stdin ? { stdin: stdinChunks(input) } : {}),
      onStdout: (b) => { ctx.streams.out.write(b); },
      onStderr: (b) => { ctx.streams.err.write(b); },
    });
    if (res.exitCode !== 0) {
      if (res.exitCode > 0) throw new CliError(`command terminated with exit code ${res.exitCode}`, res.exitCode);
      throw new CliError(`error: ${res.status.message ?? 'exec failed'}`);
    }
  } finally {
    if (raw) input.setRawMode!(false);
    // stdin keeps the event loop alive after the remote side ended.
    if (o.stdin) (input as unknown as { pause?: () => void; destroy?: () => void }).destroy?.();
  }
}
