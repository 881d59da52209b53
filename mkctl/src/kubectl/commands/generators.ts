/**
 * kubectl's generator commands: `mkctl create namespace|deployment|configmap|secret
 * generic|tls|docker-registry|service clusterip|nodeport|loadbalancer|job`, `mkctl run`,
 * `mkctl expose`, with kubectl's flags, field managers (kubectl-create, kubectl-run,
 * kubectl-expose) and output ("deployment.apps/web created", -o yaml, --dry-run=client|server).
 * The objects come from ../generators.ts.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Command } from 'commander';
import { ApiError, type KubeObject } from '@mk8s/api';
import { CliError, type CliContext } from '../context.js';
import { formatApiError } from '../errors.js';
import { getObject, objectPath } from '../api-helpers.js';
import { descriptorForObject, kindPrefix, parseResourceArgs } from '../resources.js';
import { parseOutput, printObjects } from '../printers/output.js';
import { withLastApplied } from '../three-way-patch.js';
import {
  configMapObject, deploymentObject, exposeServiceObject, jobObject, namespaceObject, runPodObject, secretDockerRegistryObject,
  secretGenericObject, secretTlsObject, serviceObject, type DataSources,
} from '../generators.js';

interface OutFlags { output?: string; dryRun?: string; fieldManager?: string; saveConfig?: boolean }
const collect = (v: string, prev: string[] = []) => [...prev, v];

/** The flags every generator shares (kubectl's PrintFlags, --dry-run, --field-manager, --save-config). */
function common(cmd: Command, manager: string): Command {
  return cmd.option('-o, --output <format>', 'yaml|json|name')
    .option('--dry-run <mode>', 'none|client|server', 'none')
    .option('--field-manager <name>', 'name of the manager used to track field ownership', manager)
    .option('--save-config', 'record the last-applied annotation');
}

/** Sends (or, with --dry-run=client, only prints) one generated object; prints kubectl's line or -o. */
export async function submit(ctx: CliContext, obj: KubeObject, flags: OutFlags, verb = 'created'): Promise<void> {
  const o = { ...flags, ...explicitParentFlags() };
  const dry = o.dryRun && o.dryRun !== 'none' ? o.dryRun : undefined;
  if (dry && dry !== 'client' && dry !== 'server') throw new CliError(`error: Invalid dry-run value (${dry}). Must be "none", "server", or "client".`);
  const r = descriptorForObject(obj.apiVersion, obj.kind);
  const body = o.saveConfig ? withLastApplied(obj) : obj;
  let result: KubeObject = body;
  if (dry !== 'client') {
    if (!r) throw new CliError(`error: the server doesn't have a resource type for ${obj.kind} in ${obj.apiVersion}`);
    const ns = r.namespaced ? ctx.namespace : undefined;
    try {
      result = await ctx.client.requestJson<KubeObject>({ method: 'POST', path: objectPath(r, ns), query: { ...(dry === 'server' ? { dryRun: 'All' } : {}), fieldManager: o.fieldManager ?? 'kubectl-create' }, body });
    } catch (e) {
      if (e instanceof ApiError) throw new CliError(formatApiError(e));
      throw e;
    }
  } else if (r?.namespaced) {
    // kubectl's client dry run leaves namespace out unless -n was given.
    if (ctx.flags.namespace) result = { ...body, metadata: { ...body.metadata, namespace: ctx.flags.namespace } } as KubeObject;
  }
  if (o.output) { ctx.print(printObjects([{ ...result, apiVersion: obj.apiVersion, kind: obj.kind } as KubeObject], parseOutput(o.output), true)); return; }
  // A kind this server does not serve (a client dry run of a Job before batch/v1 exists) still reads as kubectl's job.batch.
  const apiVersion = String(obj.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  const prefix = r ? kindPrefix(r) : `${String(obj.kind).toLowerCase()}${group ? `.${group}` : ''}`;
  ctx.print(`${prefix}/${obj.metadata.name} ${verb}${dry === 'client' ? ' (dry run)' : dry === 'server' ? ' (server dry run)' : ''}\n`);
}

/** --from-file=[key=]path: the key defaults to the file's base name. */
function fileSources(specs: string[] | undefined): { key: string; content: Buffer }[] {
  return (specs ?? []).map((s) => {
    const i = s.indexOf('=');
    const [key, path] = i > 0 ? [s.slice(0, i), s.slice(i + 1)] : [basename(s), s];
    return { key, content: readFileSync(path) };
  });
}

function sources(o: { fromLiteral?: string[]; fromFile?: string[]; fromEnvFile?: string[] }): DataSources {
  return { literals: o.fromLiteral ?? [], files: fileSources(o.fromFile), envFiles: (o.fromEnvFile ?? []).map((p) => readFileSync(p, 'utf8')) };
}

const wrap = <A extends unknown[]>(fn: (...a: A) => Promise<void>) => async (...a: A) => {
  try { await fn(...a); } catch (e) { if (e instanceof Error && !(e instanceof CliError) && e.message.startsWith('error: ')) throw new CliError(e.message); throw e; }
};

/**
 * `create` itself (create -f) has -o, --dry-run and --save-config too, and commander gives an
 * option to the first command that knows it: what the user typed there counts for the generator.
 */
let parentCreate: Command | undefined;
function explicitParentFlags(): Partial<OutFlags> {
  const out: Partial<OutFlags> = {};
  const c = parentCreate;
  if (!c) return out;
  for (const k of ['output', 'dryRun', 'saveConfig'] as const) {
    if (c.getOptionValueSource(k) === 'cli') (out as Record<string, unknown>)[k] = c.getOptionValue(k);
  }
  return out;
}

export function registerGenerators(program: Command, ctx: () => CliContext): void {
  const create = program.commands.find((c) => c.name() === 'create');
  if (!create) throw new Error('registerGenerators needs the create command');
  parentCreate = create;

  common(create.command('namespace <name>').alias('ns').description('Create a namespace with the specified name'), 'kubectl-create')
    .action(wrap(async (name: string, o: OutFlags) => submit(ctx(), namespaceObject(name), o)));

  common(create.command('deployment <name>').alias('deploy').description('Create a deployment with the specified name')
    .option('--image <image>', 'image names to run (repeatable)', collect)
    .option('-r, --replicas <n>', 'number of replicas', (v) => Number(v), 1)
    .option('--port <port>', 'the containerPort this deployment exposes', (v) => Number(v), -1), 'kubectl-create')
    .argument('[command...]', 'command after --')
    .action(wrap(async (name: string, command: string[], o: OutFlags & { image?: string[]; replicas: number; port: number }) => {
      if (!o.image?.length) throw new CliError('error: required flag(s) "image" not set');
      await submit(ctx(), deploymentObject(name, { images: o.image, replicas: o.replicas, port: o.port, command }), o);
    }));

  common(create.command('configmap <name>').alias('cm').description('Create a config map from a local file, directory or literal value')
    .option('--from-literal <k=v>', 'a key and literal value (repeatable)', collect)
    .option('--from-file <[key=]path>', 'a file (repeatable)', collect)
    .option('--from-env-file <path>', 'KEY=VALUE lines (repeatable)', collect), 'kubectl-create')
    .action(wrap(async (name: string, o: OutFlags & { fromLiteral?: string[]; fromFile?: string[]; fromEnvFile?: string[] }) => submit(ctx(), configMapObject(name, sources(o)), o)));

  const secret = create.command('secret').description('Create a secret');
  common(secret.command('generic <name>').description('Create a secret from a local file, directory, or literal value')
    .option('--from-literal <k=v>', 'a key and literal value (repeatable)', collect)
    .option('--from-file <[key=]path>', 'a file (repeatable)', collect)
    .option('--from-env-file <path>', 'KEY=VALUE lines (repeatable)', collect)
    .option('--type <type>', 'the type of secret to create'), 'kubectl-create')
    .action(wrap(async (name: string, o: OutFlags & { fromLiteral?: string[]; fromFile?: string[]; fromEnvFile?: string[]; type?: string }) => submit(ctx(), secretGenericObject(name, sources(o), o.type), o)));
  common(secret.command('tls <name>').description('Create a TLS secret')
    .requiredOption('--cert <path>', 'PEM encoded public key certificate')
    .requiredOption('--key <path>', 'private key'), 'kubectl-create')
    .action(wrap(async (name: string, o: OutFlags & { cert: string; key: string }) => submit(ctx(), secretTlsObject(name, readFileSync(o.cert), readFileSync(o.key)), o)));
  common(secret.command('docker-registry <name>').description('Create a secret for use with a Docker registry')
    .option('--docker-server <server>', 'server location for Docker registry', 'https://index.docker.io/v1/')
    .option('--docker-username <user>', 'username for Docker registry authentication')
    .option('--docker-password <password>', 'password for Docker registry authentication')
    .option('--docker-email <email>', 'email for Docker registry'), 'kubectl-create')
    .action(wrap(async (name: string, o: OutFlags & { dockerServer: string; dockerUsername?: string; dockerPassword?: string; dockerEmail?: string }) => {
      if (!o.dockerUsername || !o.dockerPassword) throw new CliError('error: either --from-file or the combination of --docker-username, --docker-password and --docker-server is required');
      await submit(ctx(), secretDockerRegistryObject(name, { server: o.dockerServer, username: o.dockerUsername, password: o.dockerPassword, ...(o.dockerEmail ? { email: o.dockerEmail } : {}) }), o);
    }));

  const service = create.command('service').alias('svc').description('Create a service');
  for (const [sub, type] of [['clusterip', 'ClusterIP'], ['nodeport', 'NodePort'], ['loadbalancer', 'LoadBalancer']] as const) {
    const cmd = service.command(`${sub} <name>`).description(`Create a ${type} service`)
      .option('--tcp <port:targetPort>', 'port pairs (repeatable)', collect);
    if (sub === 'clusterip') cmd.option('--clusterip <ip>', 'assign your own ClusterIP or set to "None" for a headless service');
    if (sub === 'nodeport') cmd.option('--node-port <port>', 'port used to expose the service on each node', (v) => Number(v));
    common(cmd, 'kubectl-create').action(wrap(async (name: string, o: OutFlags & { tcp?: string[]; clusterip?: string; nodePort?: number }) => {
      if (!o.tcp?.length && o.clusterip !== 'None') throw new CliError('error: at least one tcp port specifier must be provided');
      await submit(ctx(), serviceObject(name, { type, tcp: o.tcp ?? [], ...(o.clusterip ? { clusterIP: o.clusterip } : {}), ...(o.nodePort ? { nodePort: o.nodePort } : {}) }), o);
    }));
  }

  common(create.command('job <name>').description('Create a job with the specified name')
    .option('--image <image>', 'image name to run'), 'kubectl-create')
    .argument('[command...]', 'command after --')
    .action(wrap(async (name: string, command: string[], o: OutFlags & { image?: string }) => {
      if (!o.image) throw new CliError('error: either --image or --from must be specified');
      await submit(ctx(), jobObject(name, { image: o.image, command }), o);
    }));

  common(program.command('run <name>').description('Run a particular image on the cluster')
    .option('--image <image>', 'the image for the container to run')
    .option('--port <port>', 'the port that this container exposes', (v) => Number(v), -1)
    .option('--env <k=v>', 'environment variables (repeatable)', collect)
    .option('-l, --labels <labels>', 'comma separated labels')
    .option('--restart <policy>', 'Always, OnFailure or Never', 'Always')
    .option('--image-pull-policy <policy>', 'the image pull policy for the container')
    .option('--command', 'use the extra arguments as the command, not args'), 'kubectl-run')
    .argument('[args...]', 'args (or the command with --command) after --')
    .action(wrap(async (name: string, args: string[], o: OutFlags & { image?: string; port: number; env?: string[]; labels?: string; restart: string; imagePullPolicy?: string; command?: boolean }) => {
      if (!o.image) throw new CliError('error: required flag(s) "image" not set');
      await submit(ctx(), runPodObject(name, { image: o.image, port: o.port, env: o.env ?? [], ...(o.labels ? { labels: o.labels } : {}), restart: o.restart, command: !!o.command, args, ...(o.imagePullPolicy ? { imagePullPolicy: o.imagePullPolicy } : {}) }), o);
    }));

  common(program.command('expose <resource> [name]').description('Take a replication controller, service, deployment or pod and expose it as a new Kubernetes service')
    .option('--port <port>', 'the port that the service should serve on')
    .option('--target-port <port>', 'name or number for the port on the container that the service should direct traffic to')
    .option('--name <name>', 'the name for the newly created object')
    .option('--type <type>', 'ClusterIP, NodePort, LoadBalancer, or ExternalName')
    .option('--protocol <protocol>', 'the network protocol for the service to be created', 'TCP')
    .option('-l, --labels <labels>', 'labels to apply to the service')
    .option('--selector <selector>', 'a label selector to use for this service')
    .option('--cluster-ip <ip>', 'ClusterIP to be assigned to the service'), 'kubectl-expose')
    .action(wrap(async (resource: string, name: string | undefined, o: OutFlags & { port?: string; targetPort?: string; name?: string; type?: string; protocol: string; labels?: string; selector?: string; clusterIp?: string }) => {
      const c = ctx();
      const [ref] = parseResourceArgs(name ? [resource, name] : [resource]);
      if (!ref || ref.names.length !== 1) throw new CliError('error: you must provide one resource by type and name (e.g. deployment web or deployment/web)');
      if (!['Deployment', 'ReplicaSet', 'Pod', 'Service', 'ReplicationController'].includes(ref.resource.kind)) {
        throw new CliError(`error: cannot expose a ${ref.resource.kind}.${ref.resource.group || 'core'}`);
      }
      let target: KubeObject;
      try { target = await getObject(c.client, ref.resource, ref.resource.namespaced ? c.namespace : undefined, ref.names[0]!); } catch (e) {
        if (e instanceof ApiError) throw new CliError(formatApiError(e));
        throw e;
      }
      target = { ...target, kind: ref.resource.kind } as KubeObject;
      const svc = exposeServiceObject(target, {
        ...(o.port ? { port: o.port } : {}), ...(o.targetPort ? { targetPort: o.targetPort } : {}), ...(o.name ? { name: o.name } : {}),
        ...(o.type ? { type: o.type } : {}), protocol: o.protocol, ...(o.labels ? { labels: o.labels } : {}), ...(o.selector ? { selector: o.selector } : {}),
        ...(o.clusterIp ? { clusterIP: o.clusterIp } : {}),
      });
      await submit(c, svc, o, 'exposed');
    }));
}
