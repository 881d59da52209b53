#!/usr/bin/env node
import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { clusterDown, clusterStatus, clusterUp, nodeCredentials } from './cluster/cluster.js';
import { ensureAddons } from './cluster/addons.js';
import { composeAdminKubeconfig, composePki, composeStateDir } from './cluster/compose.js';
import { statePaths } from './cluster/paths.js';
import { registerKubectlCommands } from './kubectl/register.js';
import { registerNodeCommands } from './node/command.js';
import { registerEtcdCommands } from './etcd/command.js';
import { registerChaosCommands } from './chaos/command.js';
import { registerDashboardCommand } from './dashboard/command.js';
import { CliContext, type GlobalFlags } from './kubectl/context.js';
import { formatCliError } from './kubectl/errors.js';

const program = new Command('mkctl').description('mk8s command line: kubectl habits, plus the cluster itself').showHelpAfterError();
const cluster = program.command('cluster').description('start, stop and inspect the local cluster');
cluster.command('up').description('start etcd, the control plane and N nodes')
  .option('--nodes <n>', 'number of nodes', process.env['NODES'] ?? '2')
  .option('--apiservers <n>', 'number of apiservers (more than 1: behind haproxy on 127.0.0.1:6443 and 10.240.0.1:6443)', process.env['APISERVERS'] ?? '1')
  .action(async (o: { nodes: string; apiservers: string }) => { await clusterUp({ nodes: Number(o.nodes), apiservers: Number(o.apiservers) }); });
cluster.command('down').description('stop everything cluster up started')
  .option('--purge', 'also wipe etcd data and logs')
  .action(async (o: { purge?: boolean }) => { await clusterDown({ purge: !!o.purge }); });
cluster.command('credentials').description('issue the certificates a machine needs to join as a node (for mkctl node join --credentials)')
  .requiredOption('--node-name <name>', 'the Node name').requiredOption('--node-ip <ip>', "the node's address (in its kubelet serving certificate)")
  .requiredOption('--out <dir>', 'where to write ca.crt, node.crt/key, kubelet-serving.crt/key, kube-proxy.crt/key')
  .action(async (o: { nodeName: string; nodeIp: string; out: string }) => { await nodeCredentials({ nodeName: o.nodeName, nodeIp: o.nodeIp, outDir: o.out }); });
cluster.command('addons').description('apply the add-on manifests (cluster DNS) and wait for them (cluster up does this; the compose cluster runs it once)')
  .option('--timeout <seconds>', 'how long to wait for the add-ons', '300')
  .action(async (o: { timeout: string }) => {
    const p = statePaths();
    // The global --kubeconfig names the admin's credentials (the compose addons service's), else the local cluster's.
    const kubeconfig = (program.opts() as { kubeconfig?: string }).kubeconfig ?? p.kubeconfig;
    await ensureAddons({ root: p.root, kubeconfig, out: (l) => console.log(l), timeoutMs: Number(o.timeout) * 1000 });
  });
cluster.command('compose-pki').description("make the compose cluster's PKI and each compose service's credentials (the compose pki service runs this)")
  .requiredOption('--dir <dir>', 'the PKI directory: ca/ (kept) and one directory per service')
  .action(async (o: { dir: string }) => { await composePki({ dir: o.dir }); });
cluster.command('compose-credentials').description("print (or write) the admin's kubeconfig for the compose cluster, for kubectl on this machine")
  .option('--state-dir <dir>', 'the compose state dir ($MK8S_COMPOSE_STATE, else /var/lib/mk8s-compose)')
  .option('--port <port>', 'the published apiserver port on 127.0.0.1 ($MK8S_COMPOSE_PORT, else 16443)')
  .option('--out <file>', 'write the kubeconfig there (mode 0600) instead of printing it')
  .action((o: { stateDir?: string; port?: string; out?: string }) => {
    const text = composeAdminKubeconfig({ stateDir: o.stateDir ?? composeStateDir(), port: Number(o.port ?? process.env['MK8S_COMPOSE_PORT'] ?? 16443) });
    if (o.out) writeFileSync(o.out, text, { mode: 0o600 }); else process.stdout.write(text);
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
registerDashboardCommand(program, getCtx);

program.parseAsync(process.argv).then(async () => { await ctx?.close(); }).catch((err: unknown) => {
  let server: string | undefined;
  try { server = ctx?.client.config.server; } catch { /* no kubeconfig: the error says so */ }
  const { message, exitCode } = formatCliError(err, server);
  if (process.env['MKCTL_DEBUG'] && err instanceof Error) console.error(err.stack);
  console.error(message);
  process.exit(exitCode);
});
