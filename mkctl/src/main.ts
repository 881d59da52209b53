#!/usr/bin/env node
import { Command } from 'commander';
import { clusterDown, clusterStatus, clusterUp, nodeCredentials } from './cluster/cluster.js';
import { ensureAddons } from './cluster/addons.js';
import { statePaths } from './cluster/paths.js';
import { registerKubectlCommands } from './kubectl/register.js';
import { registerNodeCommands } from './node/command.js';
import { registerEtcdCommands } from './etcd/command.js';
import { registerChaosCommands } from './chaos/command.js';
import { CliContext, type GlobalFlags } from './kubectl/context.js';
import { formatCliError } from './kubectl/errors.js';

const program = new Command('mkctl').description('mk8s command line: kubectl habits, plus the cluster itself').showHelpAfterError();
const cluster = program.command('cluster').description('start, stop and inspect the local cluster');
cluster.command('up').description('start etcd, the control plane and N nodes')
  .option('--nodes <n>', 'number of nodes', process.env['NODES'] ?? '2')
  .action(async (o: { nodes: string }) => { await clusterUp({ nodes: Number(o.nodes) }); });
cluster.command('down').description('stop everything cluster up started')
  .option('--purge', 'also wipe etcd data and logs')
  .action(async (o: { purge?: boolean }) => { await clusterDown({ purge: !!o.purge }); });
cluster.command('credentials').description('issue the certificates a machine needs to join as a node (for mkctl node join --credentials)')
  .requiredOption('--node-name <name>', 'the Node name').requiredOption('--node-ip <ip>', "the node's address (in its kubelet serving certificate)")
  .requiredOption('--out <dir>', 'where to write ca.crt, node.crt/key, kubelet-serving.crt/key, kube-proxy.crt/key')
  .action(async (o: { nodeName: string; nodeIp: string; out: string }) => { await nodeCredentials({ nodeName: o.nodeName, nodeIp: o.nodeIp, outDir: o.out }); });
cluster.command('addons').description('apply the add-on manifests (cluster DNS) and wait for them (cluster up does this; the compose cluster runs it once)')
  .option('--apiserver <url>', 'the apiserver, plain and without credentials (else the local cluster\'s admin kubeconfig); not --server, which is the global kubectl flag')
  .option('--addon-apiserver <url>', 'how add-on pods reach the apiserver when not through their ServiceAccount: --server URL for them')
  .option('--timeout <seconds>', 'how long to wait for the add-ons', '300')
  .action(async (o: { apiserver?: string; addonApiserver?: string; timeout: string }) => {
    const p = statePaths();
    // The global -s/--server names the apiserver as well (commander gives it to the program, not here).
    const server = o.apiserver ?? (program.opts() as { server?: string }).server;
    await ensureAddons({ root: p.root, ...(server ? { server } : { kubeconfig: p.kubeconfig }), ...(o.addonApiserver ? { addonApiserver: o.addonApiserver } : {}), out: (l) => console.log(l), timeoutMs: Number(o.timeout) * 1000 });
  });
cluster.command('status').description("report each component's health")
  .action(async () => { if (!(await clusterStatus())) process.exitCode = 1; });

program
  .option('--kubeconfig <path>', 'path to the kubeconfig file ($KUBECONFIG, else ~/.kube/config)')
  .option('--context <name>', 'the kubeconfig context to use')
  .option('-n, --namespace <ns>', 'the namespace scope for this request')
  .option('-s, --server <url>', 'the address of the API server');

let ctx: CliContext | undefined;
const getCtx = (): CliContext => {
  ctx ??= new CliContext(program.opts<GlobalFlags>(), { out: process.stdout, err: process.stderr, in: process.stdin });
  return ctx;
};
registerKubectlCommands(program, getCtx);
registerNodeCommands(program);
registerEtcdCommands(program);
registerChaosCommands(program, getCtx);

program.parseAsync(process.argv).then(async () => { await ctx?.close(); }).catch((err: unknown) => {
  let server: string | undefined;
  try { server = ctx?.client.config.server; } catch { /* no kubeconfig: the error says so */ }
  const { message, exitCode } = formatCliError(err, server);
  if (process.env['MKCTL_DEBUG'] && err instanceof Error) console.error(err.stack);
  console.error(message);
  process.exit(exitCode);
});
