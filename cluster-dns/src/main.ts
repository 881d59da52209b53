#!/usr/bin/env node
/**
 * The cluster-dns binary: flags → createClusterDns → run until SIGINT/SIGTERM. Without
 * --kubeconfig it uses the pod's in-cluster configuration (ServiceAccount token and CA).
 */
import { createClientset, inClusterRestConfig, newRestClientMetrics } from '@mk8s/client';
import { createLogger, newRegistry, parseFlags, setupSignalHandler } from '@mk8s/component-base';
import { createClusterDns } from './create-cluster-dns.js';
import type { PodsMode } from './record-store.js';

const flags = parseFlags(process.argv.slice(2), {
  kubeconfig: { type: 'string' },
  // A plain URL and no credentials: clusters without authentication (the compose cluster).
  server: { type: 'string' },
  'cluster-domain': { type: 'string', default: 'cluster.local' },
  port: { type: 'string', default: '53' },
  'bind-address': { type: 'string', default: '0.0.0.0' },
  'health-port': { type: 'string', default: '9153' },
  'health-bind-address': { type: 'string', default: '0.0.0.0' },
  upstream: { type: 'string' },
  pods: { type: 'string', default: 'insecure' },
  ttl: { type: 'string', default: '5' },
  'nameserver-ip': { type: 'string' },
  lameduck: { type: 'string', default: '5s' },
  'log-level': { type: 'string', default: 'info' },
});
/** "5s", "500ms", "1m"; a bare number is seconds. */
function durationMs(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(s.trim());
  if (!m) throw new Error(`invalid duration "${s}"`);
  return Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000 }[m[2] ?? 's'] ?? 1000);
}
const logger = createLogger({ component: 'cluster-dns', level: flags['log-level'] ?? 'info' });
const pods = flags.pods as PodsMode;
if (!['insecure', 'verified', 'disabled'].includes(pods)) { logger.error({ pods }, '--pods must be insecure, verified or disabled'); process.exit(2); }

const registry = newRegistry();
const metrics = newRestClientMetrics(registry);
const client = flags.server
  ? createClientset({ server: flags.server, userAgent: 'cluster-dns', logger, metrics })
  : flags.kubeconfig
    ? createClientset({ kubeconfig: flags.kubeconfig, userAgent: 'cluster-dns', logger, metrics })
    : createClientset({ restConfig: inClusterRestConfig(), userAgent: 'cluster-dns', logger, metrics });
const dns = createClusterDns({
  client, registry,
  clusterDomain: flags['cluster-domain'] ?? 'cluster.local',
  port: Number(flags.port),
  bindAddress: flags['bind-address'] ?? '0.0.0.0',
  healthPort: Number(flags['health-port']),
  healthBindAddress: flags['health-bind-address'] ?? '0.0.0.0',
  pods,
  ttl: Number(flags.ttl),
  lameduckMs: durationMs(flags.lameduck ?? '5s'),
  ...(flags.upstream ? { upstream: flags.upstream } : {}),
  ...(flags['nameserver-ip'] ? { nameserverIp: flags['nameserver-ip'] } : {}),
  logger,
});
const signal = setupSignalHandler();
void dns.healthPort.then((port) => logger.info({ port }, 'Serving health and metrics'));
dns.run(signal).then(
  () => process.exit(0),
  (err: unknown) => { logger.error({ err }, 'cluster-dns stopped'); process.exit(1); },
);
