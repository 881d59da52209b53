#!/usr/bin/env node
/**
 * The kubelet binary: flags → createKubelet on a RemoteRuntimeService → run until SIGINT/SIGTERM.
 * Stopping the kubelet leaves every container running: a new kubelet adopts them.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createLogger, newRegistry, parseFlags, setupSignalHandler } from '@mk8s/component-base';
import { createClientset, createEventRecorder, newRestClientMetrics } from '@mk8s/client';
import { RemoteImageService, RemoteRuntimeService } from '@mk8s/proto';
import { createKubelet, type KubeletConfig } from './kubelet.js';
import { tokenReviewAuthenticator, webhookAuthorizer } from './server-auth.js';

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
  // The kubelet API's TLS (upstream flags). Without --tls-cert-file it serves plain HTTP, unauthenticated.
  'tls-cert-file': { type: 'string' },
  'tls-private-key-file': { type: 'string' },
  'client-ca-file': { type: 'string' },
  // Upstream's flag defaults are true/AlwaysAllow; kubeadm's kubelet config sets false/Webhook, as these defaults do once TLS is on.
  'anonymous-auth': { type: 'string', default: 'false' },
  'authorization-mode': { type: 'string', default: 'Webhook' },
});

const nodeName = flags['node-name'] ?? hostname();
const logger = createLogger({ component: 'kubelet', level: flags['log-level'] ?? 'info' });
const socketPath = (flags['container-runtime-endpoint'] ?? '').replace(/^unix:\/\//, '');
// One registry for the kubelet and its clientsets (rest_client_*): /metrics on the API and health ports.
const registry = newRegistry();
const restMetrics = newRestClientMetrics(registry);
const client = createClientset({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), userAgent: 'kubelet', logger, metrics: restMetrics });
// Events go through a client of their own, as upstream's kubelet (EventRecordQPS 50, EventBurst 100):
// a burst of pods' Events must not queue the volume reads and status writes behind them.
const eventClient = createClientset({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), userAgent: 'kubelet', logger, qps: 50, burst: 100, metrics: restMetrics });
const runtime = new RemoteRuntimeService({ socketPath });
const images = new RemoteImageService({ socketPath });
const server = serverOptions();
const kubelet = createKubelet({
  nodeName,
  nodeIP: flags['node-ip'] ?? '127.0.0.1',
  rootDir: flags['root-dir'] ?? '/var/lib/mk8s-kubelet',
  client, runtime, images, logger, registry,
  recorder: createEventRecorder({ client: eventClient, component: 'kubelet', host: nodeName, logger }),
  healthPort: Number(flags['health-port']),
  healthBindAddress: flags['health-bind-address'] ?? '127.0.0.1',
  port: Number(flags.port),
  address: flags.address ?? '0.0.0.0',
  clusterDNS: (flags['cluster-dns'] ?? '').split(',').filter(Boolean),
  clusterDomain: flags['cluster-domain'] ?? 'cluster.local',
  ...(server ? { server } : {}),
});

function serverOptions(): KubeletConfig['server'] | undefined {
  const cert = flags['tls-cert-file']; const key = flags['tls-private-key-file']; const ca = flags['client-ca-file'];
  if (!cert || !key) {
    if (cert || key || ca) throw new Error('--tls-cert-file and --tls-private-key-file go together (and --client-ca-file needs them)');
    return undefined;
  }
  const mode = flags['authorization-mode'] ?? 'Webhook';
  if (mode !== 'Webhook' && mode !== 'AlwaysAllow') throw new Error(`invalid --authorization-mode ${mode} (Webhook, AlwaysAllow)`);
  const anon = flags['anonymous-auth'] ?? 'false';
  if (anon !== 'true' && anon !== 'false') throw new Error(`invalid --anonymous-auth ${anon}`);
  return {
    tls: { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8'), ...(ca ? { clientCA: readFileSync(ca, 'utf8') } : {}) },
    auth: {
      anonymousAuth: anon === 'true',
      // --authentication-token-webhook (on, as kubeadm's kubelets): bearer tokens checked by TokenReview.
      authenticateToken: tokenReviewAuthenticator({
        review: (tr) => client.requestJson({ method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', body: tr }),
      }),
      ...(mode === 'Webhook' ? { authorize: webhookAuthorizer({
        review: (sar) => client.requestJson({ method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body: sar }),
      }) } : {}),
    },
  };
}
const signal = setupSignalHandler();
kubelet.run(signal).then(
  () => process.exit(0),
  (err: unknown) => { logger.error({ err }, 'Kubelet stopped'); process.exit(1); },
);
