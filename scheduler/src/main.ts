#!/usr/bin/env node
/** The scheduler binary: flags → createScheduler → run until SIGINT/SIGTERM. */
import { createLogger, parseFlags, setupSignalHandler } from '@mk8s/component-base';
import { createScheduler } from './create-scheduler.js';

const flags = parseFlags(process.argv.slice(2), {
  kubeconfig: { type: 'string' },
  'health-port': { type: 'string', default: '10259' },
  'bind-address': { type: 'string', default: '127.0.0.1' },
  'leader-elect': { type: 'string', default: 'true' },
  'log-level': { type: 'string', default: 'info' },
  'kube-api-qps': { type: 'string', default: '1000' },
  'kube-api-burst': { type: 'string', default: '2000' },
  'scheduler-name': { type: 'string', default: 'default-scheduler' },
});

const logger = createLogger({ component: 'scheduler', level: flags['log-level'] ?? 'info' });
const signal = setupSignalHandler();
const scheduler = createScheduler({
  ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
  healthPort: Number(flags['health-port']),
  healthHost: flags['bind-address'] ?? '127.0.0.1',
  leaderElect: flags['leader-elect'] !== 'false',
  qps: Number(flags['kube-api-qps']),
  burst: Number(flags['kube-api-burst']),
  profile: { schedulerName: flags['scheduler-name'] ?? 'default-scheduler' },
  logger,
});
void scheduler.healthPort.then((port) => logger.info({ port }, 'Serving health and metrics'));
scheduler.run(signal).then(
  () => process.exit(0),
  (err: unknown) => { logger.error({ err }, 'Scheduler stopped'); process.exit(1); },
);
