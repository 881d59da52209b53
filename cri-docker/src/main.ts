#!/usr/bin/env node
// cri-docker: the CRI shim binary. Runs inside the node's network namespace
// (`ip netns exec mk8s-<node> node cri-docker/dist/main.js --node-name <node> ...`).
import { createLogger, parseFlags, setupSignalHandler } from '@mk8s/component-base';
import { createCriDockerShim } from './shim.js';

const flags = parseFlags(process.argv.slice(2), {
  'socket': { type: 'string', default: '/run/mk8s/cri-docker.sock' },
  'node-name': { type: 'string' },
  'network-plugin': { type: 'string', default: 'cni' },
  'cni-conf-dir': { type: 'string', default: '/etc/cni/net.d' },
  'cni-bin-dir': { type: 'string', default: '/opt/cni/bin:/usr/lib/cni' },
  'cni-data-dir': { type: 'string' },
  // mk8s-bridge runs inside the shim (same code and contract as its binary); false execs it.
  'cni-in-process': { type: 'string', default: 'true' },
  'pod-cidr': { type: 'string' },
  'pause-image': { type: 'string', default: 'mk8s/pause:3.9' },
  'health-port': { type: 'string' },
  'health-host': { type: 'string', default: '127.0.0.1' },
  'log-level': { type: 'string' },
});

const logger = createLogger({ component: 'cri-docker', ...(flags['log-level'] ? { level: flags['log-level'] } : {}) });
const nodeName = flags['node-name'];
if (!nodeName) { logger.error('Missing required flag --node-name'); process.exit(2); }
const plugin = flags['network-plugin'];
if (plugin !== 'cni' && plugin !== 'none') { logger.error({ plugin }, 'Unknown --network-plugin (want cni or none)'); process.exit(2); }
const { mkdirSync } = await import('node:fs');
const { dirname } = await import('node:path');
const socketPath = flags['socket'] ?? '/run/mk8s/cri-docker.sock';
mkdirSync(dirname(socketPath), { recursive: true });

const shim = createCriDockerShim({
  socketPath,
  nodeName,
  networkPlugin: plugin,
  cniConfDir: flags['cni-conf-dir'] ?? '/etc/cni/net.d',
  cniBinDirs: (flags['cni-bin-dir'] ?? '').split(':').filter(Boolean),
  ...(flags['cni-data-dir'] ? { cniDataDir: flags['cni-data-dir'] } : {}),
  ...(flags['pod-cidr'] ? { podCidr: flags['pod-cidr'] } : {}),
  cniInProcess: flags['cni-in-process'] !== 'false',
  pauseImage: flags['pause-image'] ?? 'mk8s/pause:3.9',
  ...(flags['health-port'] ? { healthPort: Number(flags['health-port']) } : {}),
  healthHost: flags['health-host'] ?? '127.0.0.1',
  logger,
});
const signal = setupSignalHandler();
try {
  await shim.run(signal);
} catch (err) {
  logger.error({ err }, 'CRI shim failed');
  process.exit(1);
}
