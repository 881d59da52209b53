/**
 * createDashboard: the dashboard as a Component (serves HTTPS until the signal aborts).
 */
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { Component, Logger } from '@mk8s/component-base';
import { buildDashboardServer } from './server/server.js';
import { loadAssets } from './server/assets.js';
import { httpsUpstream } from './server/upstream.js';
import { nodeProxyRulesReader } from './server/proxy-rules.js';

export interface DashboardConfig {
  /** The apiserver, https://host:port. */
  apiserver: string;
  /** PEM file of the CA the apiserver's certificate is signed by. */
  apiserverCaFile: string;
  tlsCertFile: string;
  tlsKeyFile: string;
  bindAddress: string;
  port: number;
  /** The built app (dist/app). */
  assetsDir: string;
  logger: Logger;
}

export interface Dashboard extends Component { /** The port it listens on, once ready. */ port(): number }

export function createDashboard(cfg: DashboardConfig): Dashboard {
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => { resolveReady = r; });
  let port = 0;
  const ca = readFileSync(cfg.apiserverCaFile);
  return {
    name: 'dashboard',
    ready,
    port: () => port,
    async run(signal) {
      const app = await buildDashboardServer({
        upstream: httpsUpstream({ server: cfg.apiserver, ca }),
        assets: loadAssets(cfg.assetsDir),
        logger: cfg.logger,
        https: { cert: readFileSync(cfg.tlsCertFile), key: readFileSync(cfg.tlsKeyFile) },
        ready: () => apiserverReady(cfg.apiserver, ca),
        // Readable when this process is root beside the nodes' netns (local mode); else the endpoint says 501.
        proxyRules: nodeProxyRulesReader(),
      });
      await app.listen({ host: cfg.bindAddress, port: cfg.port });
      const addr = app.server.address();
      port = typeof addr === 'object' && addr ? addr.port : cfg.port;
      cfg.logger.info({ url: `https://${cfg.bindAddress}:${port}/` }, 'Serving the dashboard');
      resolveReady();
      await new Promise<void>((r) => { if (signal.aborted) r(); else signal.addEventListener('abort', () => r(), { once: true }); });
      await app.close();
    },
  };
}

/** The apiserver's /readyz (anonymous may read it): no credentials of the dashboard's are involved. */
function apiserverReady(server: string, ca: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const r = httpsRequest(new URL('/readyz', server), { ca, timeout: 2000, agent: false }, (res) => { res.resume(); resolve(res.statusCode === 200); });
    r.on('timeout', () => r.destroy());
    r.on('error', () => resolve(false));
    r.end();
  });
}
