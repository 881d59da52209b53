#!/usr/bin/env node
/** The controller-manager binary: flags → createControllerManager → run until SIGINT/SIGTERM. */
import { readFileSync } from 'node:fs';
import { createLogger, defaultFeatureGate, parseFlags, setFeatureGatesFlag, setupSignalHandler } from '@mk8s/component-base';
import { createControllerManager } from './manager.js';
import { parseDuration } from './util/meta.js';

const flags = parseFlags(process.argv.slice(2), {
  kubeconfig: { type: 'string' },
  'health-port': { type: 'string', default: '10257' },
  'bind-address': { type: 'string', default: '127.0.0.1' },
  'leader-elect': { type: 'string', default: 'true' },
  'leader-elect-lease-duration': { type: 'string', default: '15s' },
  'leader-elect-renew-deadline': { type: 'string', default: '10s' },
  'leader-elect-retry-period': { type: 'string', default: '2s' },
  controllers: { type: 'string', default: '*' },
  'node-monitor-grace-period': { type: 'string', default: '50s' },
  'node-monitor-period': { type: 'string', default: '5s' },
  'node-startup-grace-period': { type: 'string', default: '1m0s' },
  'pod-eviction-timeout': { type: 'string' },
  'default-not-ready-toleration-seconds': { type: 'string' },
  'node-eviction-rate': { type: 'string', default: '0.1' },
  'cluster-cidr': { type: 'string', default: '10.244.0.0/16' },
  'node-cidr-mask-size': { type: 'string', default: '24' },
  'kube-api-qps': { type: 'string', default: '1000' },
  'kube-api-burst': { type: 'string', default: '2000' },
  'log-level': { type: 'string', default: 'info' },
  'root-ca-file': { type: 'string' },
  'cluster-signing-cert-file': { type: 'string' },
  'cluster-signing-key-file': { type: 'string' },
  'cluster-signing-duration': { type: 'string', default: '8760h0m0s' },
  'feature-gates': { type: 'string', default: '' },
  'horizontal-pod-autoscaler-sync-period': { type: 'string', default: '15s' },
  'horizontal-pod-autoscaler-downscale-stabilization': { type: 'string', default: '5m0s' },
  'horizontal-pod-autoscaler-tolerance': { type: 'string', default: '0.1' },
  'terminated-pod-gc-threshold': { type: 'string', default: '12500' },
});
const featureGateErr = setFeatureGatesFlag(defaultFeatureGate, flags['feature-gates'] ?? '');
if (featureGateErr) { process.stderr.write(`Error: ${featureGateErr}\n`); process.exit(1); }

const logger = createLogger({ component: 'controller-manager', level: flags['log-level'] ?? 'info' });
const ms = (flag: string, v: string | undefined): number => {
  try { return parseDuration(v ?? ''); } catch (err) { logger.fatal({ flag, value: v }, (err as Error).message); process.exit(2); }
};
// --pod-eviction-timeout (a duration, as old releases had) and --default-not-ready-toleration-seconds
// (the apiserver flag upstream) both set how long pods tolerate a not-ready/unreachable node.
const tolerationSeconds = flags['default-not-ready-toleration-seconds'] !== undefined
  ? Number(flags['default-not-ready-toleration-seconds'])
  : flags['pod-eviction-timeout'] !== undefined ? ms('pod-eviction-timeout', flags['pod-eviction-timeout']) / 1000 : 300;

const signal = setupSignalHandler();
let cm: ReturnType<typeof createControllerManager>;
try {
  cm = build();
} catch (err) {
  logger.fatal({ err }, 'Could not start the controller manager');
  process.exit(1);
}
void cm.healthPort.then((port) => logger.info({ port }, 'Serving health and metrics'));
cm.run(signal).then(
  () => process.exit(0),
  (err: unknown) => { logger.error({ err }, 'Controller manager stopped'); process.exit(1); },
);

function build(): ReturnType<typeof createControllerManager> {
  return createControllerManager({
    ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
    healthPort: Number(flags['health-port']),
    healthHost: flags['bind-address'] ?? '127.0.0.1',
    leaderElect: flags['leader-elect'] !== 'false',
    leaderElection: {
      leaseDurationMs: ms('leader-elect-lease-duration', flags['leader-elect-lease-duration']),
      renewDeadlineMs: ms('leader-elect-renew-deadline', flags['leader-elect-renew-deadline']),
      retryPeriodMs: ms('leader-elect-retry-period', flags['leader-elect-retry-period']),
    },
    controllers: (flags.controllers ?? '*').split(','),
    nodeMonitorGracePeriodMs: ms('node-monitor-grace-period', flags['node-monitor-grace-period']),
    nodeMonitorPeriodMs: ms('node-monitor-period', flags['node-monitor-period']),
    nodeStartupGracePeriodMs: ms('node-startup-grace-period', flags['node-startup-grace-period']),
    defaultTolerationSeconds: tolerationSeconds,
    evictionQPS: Number(flags['node-eviction-rate']),
    clusterCIDR: flags['cluster-cidr'] ?? '10.244.0.0/16',
    nodeCIDRMaskSize: Number(flags['node-cidr-mask-size']),
    ...(flags['root-ca-file'] ? { rootCA: readFileSync(flags['root-ca-file'], 'utf8') } : {}),
    ...(flags['cluster-signing-cert-file'] ? { clusterSigningCertFile: flags['cluster-signing-cert-file'] } : {}),
    ...(flags['cluster-signing-key-file'] ? { clusterSigningKeyFile: flags['cluster-signing-key-file'] } : {}),
    clusterSigningDurationMs: ms('cluster-signing-duration', flags['cluster-signing-duration']),
    hpaSyncPeriodMs: ms('horizontal-pod-autoscaler-sync-period', flags['horizontal-pod-autoscaler-sync-period']),
    hpaDownscaleStabilizationMs: ms('horizontal-pod-autoscaler-downscale-stabilization', flags['horizontal-pod-autoscaler-downscale-stabilization']),
    hpaTolerance: Number(flags['horizontal-pod-autoscaler-tolerance']),
    terminatedPodGCThreshold: Number(flags['terminated-pod-gc-threshold']),
    qps: Number(flags['kube-api-qps']),
    burst: Number(flags['kube-api-burst']),
    logger,
  });
}
