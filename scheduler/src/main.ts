#!/usr/bin/env node
/**
 * The scheduler binary: flags (and an optional KubeSchedulerConfiguration file) → createScheduler
 * → run until SIGINT/SIGTERM. Flags given explicitly win over the config file.
 */
import { parseArgs } from 'node:util';
import { createLogger, parseFlags, setupSignalHandler } from '@mk8s/component-base';
import { loadSchedulerConfig } from './config.js';
import { createScheduler, type SchedulerConfig } from './create-scheduler.js';

const argv = process.argv.slice(2);
const flags = parseFlags(argv, {
  config: { type: 'string' },
  kubeconfig: { type: 'string' },
  'health-port': { type: 'string', default: '10259' },
  'bind-address': { type: 'string', default: '127.0.0.1' },
  'leader-elect': { type: 'string', default: 'true' },
  'log-level': { type: 'string', default: 'info' },
  'kube-api-qps': { type: 'string', default: '1000' },
  'kube-api-burst': { type: 'string', default: '2000' },
  'scheduler-name': { type: 'string' },
});
// Which flags were given on the command line (not defaults), so they can override the file.
const given = new Set(Object.keys(parseArgs({ args: argv, strict: false }).values));

const logger = createLogger({ component: 'scheduler', level: flags['log-level'] ?? 'info' });
const file: Partial<SchedulerConfig> = flags.config ? loadSchedulerConfig(flags.config) : {};
const pick = <T>(flag: string, fromFlag: T, fromFile: T | undefined): T => (given.has(flag) || fromFile === undefined ? fromFlag : fromFile);
const profile = { ...file.profile, ...(flags['scheduler-name'] ? { schedulerName: flags['scheduler-name'] } : {}) };
const kubeconfig = flags.kubeconfig ?? file.kubeconfig;

const signal = setupSignalHandler();
let scheduler: ReturnType<typeof createScheduler>;
try {
  scheduler = createScheduler({
    ...file,
    ...(kubeconfig ? { kubeconfig } : {}),
    healthPort: Number(flags['health-port']),
    healthHost: flags['bind-address'] ?? '127.0.0.1',
    leaderElect: pick('leader-elect', flags['leader-elect'] !== 'false', file.leaderElect),
    qps: pick('kube-api-qps', Number(flags['kube-api-qps']), file.qps),
    burst: pick('kube-api-burst', Number(flags['kube-api-burst']), file.burst),
    profile,
    logger,
  });
} catch (err) {
  logger.error({ err }, 'Could not start the scheduler');
  process.exit(1);
}
void scheduler.healthPort.then((port) => logger.info({ port }, 'Serving health and metrics'));
scheduler.run(signal).then(
  () => process.exit(0),
  (err: unknown) => { logger.error({ err }, 'Scheduler stopped'); process.exit(1); },
);
