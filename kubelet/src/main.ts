#!/usr/bin/env node
/**
 * The kubelet binary: flags → createKubelet on a RemoteRuntimeService → run until SIGINT/SIGTERM.
 * Stopping the kubelet leaves every container running: a new kubelet adopts them.
 */
import { hostname } from 'node:os';
import { createLogger, parseFlags, setupSignalHandler } from '@mk8s/component-base';
import { createClientset } from '@mk8s/client';
import { RemoteImageService, RemoteRuntimeService } from '@mk8s/proto';
import { createKubelet } from './kubelet.js';

const flags = parseFlags(process.argv.slice(2), {
  kubeconfig: { type: 'string' },
  'node-name': { type: 'string' },
  'node-ip': { type: 'string', default: '127.0.0.1' },
  'container-runtime-endpoint': { type: 'string', default: 'unix:///var/run/mk8s/cri.sock' },
  'root-dir': { type: 'string', default: '/var/lib/mk8s-kubelet' },
  'health-port': { type: 'string', default: '10248' },
  'health-bind-address': { type: 'string', default: '127.0.0.1' },
  port: { type: 'string', default: '10250' },
  address: { type: 'string', default: '0.0.0.0' },
  'cluster-dns': { type: 'string', default: '10.96.0.10' },
  'cluster-domain': { type: 'string', default: 'cluster.local' },
  'log-level': { type: 'string', default: 'info' },
});

const nodeName = flags['node-name'] ?? hostname();
const logger = createLogger({ component: 'kubelet', level: flags['log-level'] ?? 'info' });
const socketPath = (flags['container-runtime-endpoint'] ?? '').replace(/^unix:\/\//, '');
const client = createClientset({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), userAgent: 'kubelet', logger });
const runtime = new RemoteRuntimeService({ socketPath });
const images = new RemoteImageService({ socketPath });
const kubelet = createKubelet({
  nodeName,
  nodeIP: flags['node-ip'] ?? '127.0.0.1',
  rootDir: flags['root-dir'] ?? '/var/lib/mk8s-kubelet',
  client, runtime, images, logger,
  healthPort: Number(flags['health-port']),
  healthBindAddress: flags['health-bind-address'] ?? '127.0.0.1',
  port: Number(flags.port),
  address: flags.address ?? '0.0.0.0',
  clusterDNS: (flags['cluster-dns'] ?? '').split(',').filter(Boolean),
  clusterDomain: flags['cluster-domain'] ?? 'cluster.local',
});
const signal = setupSignalHandler();
kubelet.run(signal).then(
  () => process.exit(0),
  (err: unknown) => { logger.error({ err }, 'Kubelet stopped'); process.exit(1); },
);
