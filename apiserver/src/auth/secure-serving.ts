/**
 * HTTPS serving for the apiserver (--tls-cert-file, --tls-private-key-file, --client-ca-file):
 * one https.Server per bind address feeding the same fastify instance (requests and upgrades),
 * as the plain-HTTP extra addresses do. Client certificates are requested and verified against the
 * client CA but not required: bearer tokens and the public paths still work without one.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

export interface TlsServingOptions {
  certFile: string;
  keyFile: string;
  /** CA bundle that signs client certificates; absent: no client certificates are requested. */
  clientCAFile?: string;
}

/** How long an idle keep-alive connection stays open (upstream's http2 IdleTimeout, 90 s). */
export const KEEP_ALIVE_TIMEOUT_MS = 90_000;

/** Listens on every host (port 0: the first picks one, the rest reuse it). Call after app.ready(). */
export async function listenTls(app: FastifyInstance, hosts: readonly string[], port: number, o: TlsServingOptions): Promise<{ servers: Server[]; port: number; urls: string[] }> {
  const tls = {
    cert: readFileSync(o.certFile), key: readFileSync(o.keyFile),
    ...(o.clientCAFile ? { ca: readFileSync(o.clientCAFile), requestCert: true, rejectUnauthorized: false } : {}),
    minVersion: 'TLSv1.2' as const,
  };
  const servers: Server[] = []; const urls: string[] = [];
  let chosen = port;
  try {
    for (const host of hosts) {
      const s = createServer(tls);
      // As upstream's 90 s idle timeout: Node's 5 s default closed a client's idle connections
      // between bursts, and every reconnect paid a TLS handshake on both sides.
      s.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      const main = app.server;
      s.on('request', (req, res) => main.emit('request', req, res));
      s.on('upgrade', (req, socket, head) => main.emit('upgrade', req, socket, head));
      s.on('connect', (req, socket, head) => main.emit('connect', req, socket, head));
      await new Promise<void>((resolve, reject) => { s.once('error', reject); s.listen(chosen, host, () => resolve()); });
      chosen = (s.address() as AddressInfo).port;
      servers.push(s);
      urls.push(`https://${host.includes(':') ? `[${host}]` : host}:${chosen}`);
    }
  } catch (err) {
    for (const s of servers) s.close();
    throw err;
  }
  return { servers, port: chosen, urls };
}
