import type { Command } from 'commander';
import { DEFAULT_CLUSTER_CIDR, nodeJoin, nodeLeave } from './join.js';

interface JoinFlags { server?: string; token?: string; credentials?: string; nodeName?: string; nodeIp?: string; stateDir?: string; clusterCidr: string; foreground?: boolean; timeout: string }
interface LeaveFlags { nodeName?: string; stateDir?: string; deleteNode?: boolean; keepState?: boolean }

/** `mkctl node join|leave`. --server is also mkctl's global flag: commander hands it to the program, so read both. */
export function registerNodeCommands(program: Command): void {
  const node = program.command('node').description('join this machine to a cluster as a node, or leave it');
  node.command('join').description('start the node components (cri-docker, kubelet, kube-proxy) here, pointed at a remote apiserver')
    .option('--server <url>', 'the apiserver URL as this machine reaches it, e.g. https://10.240.0.1:6443')
    .option('--token <token>', 'bearer token for the node (written to its kubeconfig)')
    .option('--credentials <dir>', 'certificates from `mkctl cluster credentials` (TLS with the node\'s own identity; the kubelet serves HTTPS)')
    .option('--node-name <name>', 'the Node name (default: this hostname)')
    .option('--node-ip <ip>', 'an address of this machine the control plane can reach')
    .option('--state-dir <dir>', 'pid files, logs, kubeconfig, CNI and kubelet state (default /var/lib/mk8s-node/<node>)')
    .option('--cluster-cidr <cidr>', 'the pod network', DEFAULT_CLUSTER_CIDR)
    .option('--foreground', 'supervise the components in this process (container entrypoints) instead of detaching')
    .option('--timeout <seconds>', 'how long to wait for the apiserver and each component', '60')
    .action(async (o: JoinFlags, cmd: Command) => {
      const server = o.server ?? cmd.optsWithGlobals<{ server?: string }>().server;
      if (!server) throw new Error('--server is required: the apiserver URL, e.g. http://10.240.0.1:6443');
      if (!o.nodeIp) throw new Error('--node-ip is required: an address of this machine the control plane can reach');
      const nodeName = o.nodeName ?? (await import('node:os')).hostname();
      await nodeJoin({
        server, nodeName, nodeIp: o.nodeIp, clusterCidr: o.clusterCidr, timeoutMs: Number(o.timeout) * 1000,
        ...(o.token ? { token: o.token } : {}), ...(o.credentials ? { credentials: o.credentials } : {}), ...(o.stateDir ? { stateDir: o.stateDir } : {}), ...(o.foreground ? { foreground: true } : {}),
      });
    });
  node.command('leave').description('stop the node components, remove their pod containers, rules and state')
    .option('--node-name <name>', 'the Node name given to join (default: this hostname)')
    .option('--state-dir <dir>', 'the state dir given to join')
    .option('--delete-node', 'also delete the Node object')
    .option('--keep-state', 'keep the state dir (logs)')
    .action(async (o: LeaveFlags) => {
      const nodeName = o.nodeName ?? (await import('node:os')).hostname();
      await nodeLeave({ nodeName, ...(o.stateDir ? { stateDir: o.stateDir } : {}), deleteNode: !!o.deleteNode, keepState: !!o.keepState });
    });
}
