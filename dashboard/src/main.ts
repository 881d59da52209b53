#!/usr/bin/env node
/** The dashboard binary: flags → createDashboard → serve until SIGINT/SIGTERM. */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger, parseFlags, setupSignalHandler } from '@mk8s/component-base';
import { createDashboard } from './create-dashboard.js';

const flags = parseFlags(process.argv.slice(2), {
  apiserver: { type: 'string', default: 'https://127.0.0.1:6443' },
  'apiserver-ca-file': { type: 'string' },
  'tls-cert-file': { type: 'string' },
  'tls-private-key-file': { type: 'string' },
  'bind-address': { type: 'string', default: '127.0.0.1' },
  port: { type: 'string', default: '8443' },
  'assets-dir': { type: 'string' },
  'log-level': { type: 'string', default: 'info' },
});
const logger = createLogger({ component: 'dashboard', level: flags['log-level'] ?? 'info' });
const need = (name: 'apiserver-ca-file' | 'tls-cert-file' | 'tls-private-key-file'): string => {
  const v = flags[name];
  if (!v) { logger.error({ flag: name }, 'Missing required flag'); process.exit(2); }
  return v;
};
const dashboard = createDashboard({
  apiserver: flags.apiserver ?? 'https://127.0.0.1:6443',
  apiserverCaFile: need('apiserver-ca-file'),
  tlsCertFile: need('tls-cert-file'),
  tlsKeyFile: need('tls-private-key-file'),
  bindAddress: flags['bind-address'] ?? '127.0.0.1',
  port: Number(flags.port),
  // dist/main.js → dist/app
  assetsDir: flags['assets-dir'] ?? join(dirname(fileURLToPath(import.meta.url)), 'app'),
  logger,
});
dashboard.run(setupSignalHandler()).then(() => process.exit(0), (err: unknown) => {
  logger.error({ err }, 'Dashboard failed');
  process.exit(1);
});
