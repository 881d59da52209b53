#!/usr/bin/env node
/**
 * The metrics-server binary (upstream flags): flags → createMetricsServer → run until SIGINT/SIGTERM.
 * Without --kubeconfig it uses the pod's in-cluster configuration. The kubelets are scraped with
 * the same bearer token the apiserver client uses (its ServiceAccount's), verified against
 * --kubelet-certificate-authority unless --kubelet-insecure-tls.
 */
import { readFileSync } from 'node:fs';
import { parseGoDuration } from '@mk8s/api';
import { createClientset, inClusterRestConfig, loadKubeConfig, newRestClientMetrics, restConfigFromKubeConfig, type RestConfig } from '@mk8s/client';
import { createLogger, newRegistry, parseFlags, setupSignalHandler } from '@mk8s/component-base';
import { createMetricsServer } from './create-metrics-server.js';
import { DEFAULT_ADDRESS_TYPES, httpsKubeletClient, type AddressType } from './scraper.js';

const flags = parseFlags(process.argv.slice(2), {
  kubeconfig: { type: 'string' },
  'bind-address': { type: 'string', default: '0.0.0.0' },
  'secure-port': { type: 'string', default: '4443' },
  'tls-cert-file': { type: 'string' },
  'tls-private-key-file': { type: 'string' },
  'metric-resolution': { type: 'string', default: '15s' },
  'kubelet-certificate-authority': { type: 'string' },
  'kubelet-insecure-tls': { type: 'boolean', default: false },
  'kubelet-preferred-address-types': { type: 'string', default: DEFAULT_ADDRESS_TYPES.join(',') },
  'kubelet-port': { type: 'string', default: '10250' },
  'kubelet-use-node-status-port': { type: 'boolean', default: false },
  'client-ca-file': { type: 'string' },
  'requestheader-client-ca-file': { type: 'string' },
  'requestheader-allowed-names': { type: 'string', default: '' },
  'requestheader-username-headers': { type: 'string', default: 'X-Remote-User' },
  'requestheader-group-headers': { type: 'string', default: 'X-Remote-Group' },
  'requestheader-extra-headers-prefix': { type: 'string', default: 'X-Remote-Extra-' },
  'log-level': { type: 'string', default: 'info' },
});
const logger = createLogger({ component: 'metrics-server', level: flags['log-level'] ?? 'info' });
const fail = (msg: string, extra: Record<string, unknown> = {}): never => { logger.error(extra, msg); process.exit(2); };
const list = (s: string | undefined) => (s ?? '').split(',').map((x) => x.trim()).filter(Boolean);

let resolutionMs = 15_000;
try { resolutionMs = parseGoDuration(flags['metric-resolution'] ?? '15s'); } catch (err) { fail((err as Error).message); }
if (resolutionMs < 10_000) fail('--metric-resolution must be at least 10s (upstream)');
const certFile = flags['tls-cert-file'], keyFile = flags['tls-private-key-file'];
if (!certFile || !keyFile) fail('--tls-cert-file and --tls-private-key-file are required (this build makes no self-signed certificate)');
const kubeletCA = flags['kubelet-certificate-authority'];
if (!kubeletCA && !flags['kubelet-insecure-tls']) fail('--kubelet-certificate-authority is required unless --kubelet-insecure-tls');
const addressTypes = list(flags['kubelet-preferred-address-types']) as AddressType[];
for (const t of addressTypes) if (!DEFAULT_ADDRESS_TYPES.includes(t)) fail(`unknown address type ${t}`);

const restConfig: RestConfig = flags.kubeconfig ? restConfigFromKubeConfig(loadKubeConfig(flags.kubeconfig)) : inClusterRestConfig();
const registry = newRegistry();
const client = createClientset({ restConfig, userAgent: 'metrics-server', logger, metrics: newRestClientMetrics(registry) });
const rhCA = flags['requestheader-client-ca-file'];
const ms = createMetricsServer({
  client,
  kubeletClient: httpsKubeletClient({
    ...(kubeletCA ? { ca: readFileSync(kubeletCA, 'utf8') } : {}), insecure: flags['kubelet-insecure-tls'],
    token: () => restConfig.token,
    ...(restConfig.token ? {} : restConfig.cert && restConfig.key ? { clientCert: { cert: restConfig.cert, key: restConfig.key } } : {}),
  }),
  tls: { cert: readFileSync(certFile!, 'utf8'), key: readFileSync(keyFile!, 'utf8') },
  bindAddress: flags['bind-address'] ?? '0.0.0.0',
  securePort: Number(flags['secure-port']),
  resolutionMs,
  ...(rhCA ? { requestHeader: {
    clientCA: readFileSync(rhCA, 'utf8'), allowedNames: list(flags['requestheader-allowed-names']),
    usernameHeaders: list(flags['requestheader-username-headers']), groupHeaders: list(flags['requestheader-group-headers']),
    extraHeaderPrefixes: list(flags['requestheader-extra-headers-prefix']),
  } } : {}),
  ...(flags['client-ca-file'] ? { clientCA: readFileSync(flags['client-ca-file'], 'utf8') } : {}),
  addressTypes, kubeletPort: Number(flags['kubelet-port']), useNodeStatusPort: flags['kubelet-use-node-status-port'],
  registry, logger,
});
const signal = setupSignalHandler();
ms.run(signal).then(
  () => process.exit(0),
  (err: unknown) => { logger.error({ err }, 'metrics-server stopped'); process.exit(1); },
);
