/**
 * The secure serving side: one handler for every request (`handle`, no I/O of its own beyond the
 * auth reviews, so unit tests call it directly) and the HTTPS listener that adapts node:https to
 * it. Paths: `/healthz`, `/livez`, `/readyz` (anonymous; `?verbose` lists the checks), `/metrics`
 * (authorized as the non-resource path), `/apis...` (authenticated, authorized, then api.ts).
 */
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { ApiError } from '@mk8s/api';
import type { Logger } from '@mk8s/component-base';
import type { Registry } from 'prom-client';
import { attributesFor, route, serve, type ApiSources } from './api.js';
import { forbiddenMessage, type DelegatedAuth, type PeerChain } from './delegated-auth.js';
import type { MetricsServerMetrics } from './metrics.js';

export interface HealthCheck { name: string; check(): string | undefined }

export interface HandlerDeps {
  auth: DelegatedAuth;
  sources: ApiSources;
  registry: Registry;
  metrics?: MetricsServerMetrics;
  /** /livez and /healthz checks: each returns an error text, or undefined when fine. */
  liveChecks: readonly HealthCheck[];
  /** /readyz checks (the live ones are added). */
  readyChecks: readonly HealthCheck[];
  logger: Logger;
}

export interface Request { method: string; url: string; headers: IncomingHttpHeaders; peer: PeerChain }
export interface Response { code: number; contentType: string; body: string }

const json = (code: number, body: unknown): Response => ({ code, contentType: 'application/json', body: JSON.stringify(body) });
const status = (err: ApiError): Response => json(err.code, err.toStatus());

function health(checks: readonly HealthCheck[], verbose: boolean, what: string): Response {
  const results = checks.map((c) => ({ name: c.name, err: c.check() }));
  const failed = results.filter((r) => r.err !== undefined);
  if (!verbose && failed.length === 0) return { code: 200, contentType: 'text/plain; charset=utf-8', body: 'ok' };
  const lines = results.map((r) => (r.err === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
  const tail = failed.length ? `${what} check failed` : `${what} check passed`;
  return { code: failed.length ? 500 : 200, contentType: 'text/plain; charset=utf-8', body: `${lines.join('\n')}\n${tail}\n` };
}

export async function handle(req: Request, d: HandlerDeps): Promise<Response> {
  const url = new URL(req.url, 'https://metrics-server');
  const path = url.pathname;
  const verbose = url.searchParams.has('verbose');
  if (path === '/healthz' || path === '/livez') return health(d.liveChecks, verbose, path.slice(1));
  if (path === '/readyz') return health([...d.liveChecks, ...d.readyChecks], verbose, 'readyz');
  const r = route(path);
  const attrs = attributesFor(req.method, path, r, url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1');
  const resource = attrs.kind === 'resource' ? attrs.resource : '';
  const count = (res: Response) => { d.metrics?.requests.labels(attrs.verb, resource, String(res.code)).inc(); return res; };
  let user;
  try {
    user = await d.auth.authenticate(req.headers, req.peer);
  } catch (err) {
    d.logger.warn({ err }, 'Authentication failed');
    return count(status(new ApiError('InternalError', 'Internal error occurred: authentication failed')));
  }
  if (!user) return count(status(new ApiError('Unauthorized', 'Unauthorized')));
  let decision;
  try {
    decision = await d.auth.authorize(user, attrs);
  } catch (err) {
    d.logger.warn({ err, user: user.username }, 'Authorization failed');
    return count(status(new ApiError('InternalError', 'Internal error occurred: authorization failed')));
  }
  if (!decision.allowed) {
    const details = attrs.kind === 'resource' ? { details: { ...(attrs.name ? { name: attrs.name } : {}), group: attrs.group, kind: attrs.resource } } : {};
    return count(status(new ApiError('Forbidden', forbiddenMessage(user, attrs) + (decision.reason ? `: ${decision.reason}` : ''), details)));
  }
  if (path === '/metrics') {
    if (attrs.verb !== 'get') return count(status(new ApiError('MethodNotAllowed', 'the server does not allow this method on the requested resource')));
    return count({ code: 200, contentType: d.registry.contentType, body: await d.registry.metrics() });
  }
  if (watchRequested(url) && r && (r.kind === 'nodes' || r.kind === 'pods')) {
    return count(status(new ApiError('MethodNotAllowed', 'the server does not allow this method on the requested resource', { details: { group: 'metrics.k8s.io', kind: r.kind } })));
  }
  const res = serve(req.method, r, url.searchParams, d.sources);
  if (res.code === 200 && r && (r.kind === 'nodes' || r.kind === 'pods')) observeFreshness(res.body, d);
  return count(json(res.code, res.body));
}

const watchRequested = (u: URL) => u.searchParams.get('watch') === 'true' || u.searchParams.get('watch') === '1';

function observeFreshness(body: unknown, d: HandlerDeps): void {
  if (!d.metrics) return;
  const b = body as { items?: { timestamp?: string }[]; timestamp?: string };
  const now = d.sources.now();
  for (const t of b.items ? b.items.map((i) => i.timestamp) : [b.timestamp]) {
    if (t) d.metrics.freshness.observe(Math.max(0, (now - Date.parse(t)) / 1000));
  }
}

export interface ServeOptions {
  host: string;
  port: number;
  cert: string;
  key: string;
  /** CAs whose client certificates the TLS layer requests (front proxy CA + client CA); verified by DelegatedAuth. */
  clientCAs?: string;
  deps: HandlerDeps;
}

/** Listens with HTTPS; resolves once listening. */
export async function serveSecure(o: ServeOptions): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer({ cert: o.cert, key: o.key, ...(o.clientCAs ? { ca: o.clientCAs } : {}), requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const sock = req.socket as TLSSocket;
    const peerCert = typeof sock.getPeerCertificate === 'function' ? sock.getPeerCertificate(true) : undefined;
    const peer: Buffer[] = peerCert && peerCert.raw ? [peerCert.raw] : [];
    handle({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, peer }, o.deps).then((r) => {
      res.writeHead(r.code, { 'content-type': r.contentType, 'cache-control': 'no-cache, private' });
      res.end(req.method === 'HEAD' ? undefined : r.body);
    }, (err: unknown) => {
      o.deps.logger.error({ err }, 'Request failed');
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(new ApiError('InternalError', 'Internal error occurred').toStatus()));
    });
  });
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(o.port, o.host, () => { server.off('error', reject); resolve(); }); });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : o.port;
  return { server, port, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}
