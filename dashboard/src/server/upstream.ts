/**
 * How the proxy reaches the apiserver: one HTTPS request per API call, streamed both ways (watch
 * and log follow stay open as long as the browser keeps them). The dashboard trusts the cluster
 * CA and presents no client certificate: every request carries only the user's own token.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

export interface UpstreamRequest {
  method: string;
  /** Path and query, as the browser sent them. */
  path: string;
  headers: Record<string, string>;
  body?: Readable | undefined;
  signal: AbortSignal;
}

export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/** Sends one request to the apiserver (contract: resolves on the response head; the body streams). */
export type Upstream = (req: UpstreamRequest) => Promise<UpstreamResponse>;

/**
 * The real Upstream: HTTPS to server (https://host:port), verifying it against ca (PEM). An
 * http:// server (a test or bench apiserver without TLS) is reached in plain HTTP.
 */
export function httpsUpstream(o: { server: string; ca?: string | Buffer }): Upstream {
  const base = new URL(o.server);
  return (req) => new Promise((resolve, reject) => {
    const opts: RequestOptions = {
      protocol: base.protocol, hostname: base.hostname, port: base.port || 443,
      method: req.method, path: req.path, headers: req.headers, signal: req.signal, ...(o.ca ? { ca: o.ca } : {}),
      // No agent keep-alive pooling of user requests across users: one connection a request is simple and safe.
      agent: false,
    };
    const send = base.protocol === 'http:' ? httpRequest : httpsRequest;
    const r = send(opts, (res) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: res }));
    r.on('error', reject);
    if (req.body) req.body.pipe(r); else r.end();
  });
}
