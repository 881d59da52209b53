import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/** Options for {@link serveHealth}. */
export interface HealthServerOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** Metrics registry exposed on /metrics. */
  registry: Registry;
  /** /readyz answers 200 only while this returns true. */
  isReady: () => boolean | Promise<boolean>;
  /** /healthz answers 200 only while this returns true. @default () => true */
  isHealthy?: () => boolean | Promise<boolean>;
}

/** serveHealth serves /healthz, /livez, /readyz and /metrics; resolves with the listening server. */
export async function serveHealth(o: HealthServerOptions): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (ok: boolean) => { res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }); res.end(ok ? 'ok' : 'not ok'); };
    void (async () => {
      try {
        if (path === '/healthz' || path === '/livez') return answer(await (o.isHealthy ?? (() => true))());
        if (path === '/readyz') return answer(await o.isReady());
        if (path === '/metrics') {
          res.writeHead(200, { 'content-type': o.registry.contentType });
          return res.end(await o.registry.metrics());
        }
        res.writeHead(404, { 'content-type': 'text/plain' }); res.end('not found');
      } catch (err) {
        res.writeHead(500, { 'content-type': 'text/plain' }); res.end(String(err));
      }
    })();
  });
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(o.port, o.host ?? '127.0.0.1', resolve); });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : o.port;
  return { server, port, close: () => new Promise((r) => server.close(() => r())) };
}
