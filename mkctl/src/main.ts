#!/usr/bin/env node
import { Command } from 'commander';
import { clusterDown, clusterStatus, clusterUp } from './cluster/cluster.js';

const program = new Command('mkctl').description('mk8s command line: kubectl habits, plus the cluster itself').showHelpAfterError();
const cluster = program.command('cluster').description('start, stop and inspect the local cluster');
cluster.command('up').description('start etcd, the control plane and N nodes')
  .option('--nodes <n>', 'number of nodes', process.env['NODES'] ?? '2')
  .action(async (o: { nodes: string }) => { await clusterUp({ nodes: Number(o.nodes) }); });
cluster.command('down').description('stop everything cluster up started')
  .option('--purge', 'also wipe etcd data and logs')
  .action(async (o: { purge?: boolean }) => { await clusterDown({ purge: !!o.purge }); });
cluster.command('status').description("report each component's health")
  .action(async () => { if (!(await clusterStatus())) process.exitCode = 1; });

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
