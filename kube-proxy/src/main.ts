#!/usr/bin/env node
/**
 * The kube-proxy binary: flags → createKubeProxy → run until SIGINT/SIGTERM; `--cleanup` removes
 * kube-proxy's chains and exits.
 */
import { createLogger, parseFlags, setupSignalHandler } from '@mk8s/component-base';
import { createKubeProxy } from './create-kube-proxy.js';
import { ExecIptablesRunner } from './iptables.js';
import { cleanupRules } from './proxier.js';

const flags = parseFlags(process.argv.slice(2), {
  kubeconfig: { type: 'string' },
  'node-name': { type: 'string' },
  'cluster-cidr': { type: 'string', default: '10.244.0.0/16' },
  'min-sync-period': { type: 'string', default: '1s' },
  'sync-period': { type: 'string', default: '30s' },
  'health-port': { type: 'string', default: '10256' },
  'health-bind-address': { type: 'string', default: '127.0.0.1' },
  'metrics-port': { type: 'string', default: '10249' },
  'metrics-bind-address': { type: 'string', default: '127.0.0.1' },
  'route-agent': { type: 'boolean', default: false },
  'cni-conf-dir': { type: 'string' },
  'cni-data-dir': { type: 'string' },
  cleanup: { type: 'boolean', default: false },
  'log-level': { type: 'string', default: 'info' },
});
const logger = createLogger({ component: 'kube-proxy', level: flags['log-level'] ?? 'info' });

/** Go-style durations as kube-proxy takes them ("1s", "500ms", "1m"); a bare number is seconds. */
function durationMs(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new Error(`invalid duration "${s}"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'] ?? 1000;
  return Number(m[1]) * unit;
}

if (flags.cleanup) {
  await cleanupRules(new ExecIptablesRunner({ prespawn: false }));
  logger.info('Removed kube-proxy chains and jump rules');
  process.exit(0);
}
if (!flags['node-name']) { logger.error('--node-name is required'); process.exit(2); }

const proxy = createKubeProxy({
  ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
  nodeName: flags['node-name'],
  clusterCidr: flags['cluster-cidr'] ?? '10.244.0.0/16',
  minSyncPeriodMs: durationMs(flags['min-sync-period'] ?? '1s'),
  syncPeriodMs: durationMs(flags['sync-period'] ?? '30s'),
  healthPort: Number(flags['health-port']),
  healthBindAddress: flags['health-bind-address'] ?? '127.0.0.1',
  metricsPort: Number(flags['metrics-port']),
  metricsBindAddress: flags['metrics-bind-address'] ?? '127.0.0.1',
  ...(flags['route-agent'] || flags['cni-conf-dir'] ? { routeAgent: { ...(flags['cni-conf-dir'] ? { cniConfDir: flags['cni-conf-dir'] } : {}), ...(flags['cni-data-dir'] ? { cniDataDir: flags['cni-data-dir'] } : {}) } } : {}),
  logger,
});
const signal = setupSignalHandler();
void proxy.healthPort.then((port) => logger.info({ port }, 'Serving health and metrics'));
proxy.run(signal).then(
  () => process.exit(0),
  (err: unknown) => { logger.error({ err }, 'kube-proxy stopped'); process.exit(1); },
);
