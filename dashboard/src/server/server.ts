/**
 * The dashboard's HTTP(S) server: the single-page app's files, `/api` and `/apis` proxied to the
 * apiserver with the caller's own bearer token (and nothing of the dashboard's), a Service's
 * kube-proxy rules per node (`proxy-rules.ts`, authorized by the same token), `/healthz` and
 * `/readyz`. Built with `buildDashboardServer` (no listen) so tests use fastify's `inject`.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { Logger } from '@mk8s/component-base';
import { SECURITY_HEADERS, bearerToken, csrfRefusal, isProxiedPath, type RequestHeaders } from './security.js';
import { failure } from './status.js';
import { registerProxyRules, type ProxyRulesReader } from './proxy-rules.js';
import type { Upstream } from './upstream.js';

/** One file of the built app, served from memory. */
export interface Asset { contentType: string; body: Buffer }

export interface DashboardServerOptions {
  upstream: Upstream;
  /** URL path ('/index.html', '/app.js', ...) → file. '/' serves '/index.html'. */
  assets: ReadonlyMap<string, Asset>;
  logger: Logger;
  /** TLS serving certificate and key (PEM); without them plain HTTP (tests only). */
  https?: { cert: string | Buffer; key: string | Buffer };
  /** /readyz: true once the apiserver answers (the dashboard is useless before). */
  ready?: () => Promise<boolean>;
  /** Reads kube-proxy's rules for the proxy-rules endpoint; without it that endpoint answers 501. */
  proxyRules?: ProxyRulesReader;
}

/** Request headers forwarded to the apiserver; nothing else (no cookies, no forwarded-for, no impersonation). */
const FORWARDED_REQUEST_HEADERS = ['accept', 'content-type', 'content-length'] as const;
/** Response headers passed back to the browser. */
const FORWARDED_RESPONSE_HEADERS = ['content-type', 'content-length', 'warning', 'audit-id', 'retry-after'] as const;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const USER_AGENT = 'mk8s-dashboard';

/** The pino redaction the dashboard's logger applies: a token never reaches a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization', 'headers.authorization', 'authorization', 'req.headers.cookie', 'token',
];

export async function buildDashboardServer(o: DashboardServerOptions): Promise<FastifyInstance> {
  const loggerInstance = o.logger.child({}, { redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } });
  const app = (o.https
    ? Fastify({ loggerInstance, https: { cert: o.https.cert, key: o.https.key } })
    : Fastify({ loggerInstance })) as unknown as FastifyInstance;

  app.addHook('onSend', async (_req, reply, payload) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) reply.header(k, v);
    return payload;
  });

  app.get('/healthz', async (_req, reply) => reply.type('text/plain').send('ok'));
  app.get('/readyz', async (_req, reply) => {
    const ok = o.ready ? await o.ready().catch(() => false) : true;
    return reply.code(ok ? 200 : 503).type('text/plain').send(ok ? 'ok' : 'apiserver not reachable');
  });

  const sendAsset = (path: string, reply: FastifyReply) => {
    const a = o.assets.get(path);
    if (!a) return reply.code(404).type('text/plain').send('not found');
    // The page itself is never cached (a new build takes effect at once); assets revalidate.
    return reply.type(a.contentType).header('cache-control', path === '/index.html' ? 'no-store' : 'no-cache').send(a.body);
  };
  app.get('/', async (_req, reply) => sendAsset('/index.html', reply));
  app.get('/:file', async (req, reply) => sendAsset(`/${(req.params as { file: string }).file}`, reply));
  registerProxyRules(app, { upstream: o.upstream, reader: o.proxyRules, userAgent: USER_AGENT });

  await app.register(async (scope) => {
    // Bodies pass through untouched (JSON, merge/apply patches, YAML): the apiserver parses them.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    const handler = (req: FastifyRequest, reply: FastifyReply) => proxy(req, reply, o.upstream);
    for (const url of ['/api', '/api/*', '/apis', '/apis/*']) scope.route({ method: [...METHODS], url, handler });
  });
  return app;
}

async function proxy(req: FastifyRequest, reply: FastifyReply, upstream: Upstream): Promise<FastifyReply> {
  const token = bearerToken(req.headers.authorization);
  if (!token) {
    return reply.code(401).send(failure(401, 'Unauthorized', 'the dashboard has no access of its own: log in with a bearer token (mkctl dashboard --url)'));
  }
  const refusal = csrfRefusal(req.method, req.headers as RequestHeaders);
  if (refusal) return reply.code(403).send(failure(403, 'Forbidden', refusal));
  if (!isProxiedPath(req.url)) return reply.code(400).send(failure(400, 'BadRequest', 'not an API path'));

  const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'user-agent': USER_AGENT };
  for (const h of FORWARDED_REQUEST_HEADERS) {
    const v = req.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  // The browser going away (page left, watch closed) ends the upstream request too.
  const ac = new AbortController();
  reply.raw.on('close', () => ac.abort());
  let res;
  try {
    res = await upstream({ method: req.method, path: req.url, headers, body: req.body as Readable | undefined, signal: ac.signal });
  } catch (err) {
    if (ac.signal.aborted) return reply;
    req.log.warn({ err: { message: (err as Error).message }, path: req.url.split('?')[0] }, 'Could not reach the apiserver');
    return reply.code(502).send(failure(502, 'ServiceUnavailable', 'the apiserver is not reachable'));
  }
  reply.code(res.status);
  for (const h of FORWARDED_RESPONSE_HEADERS) {
    const v = res.headers[h];
    if (typeof v === 'string') reply.header(h, v);
  }
  reply.header('cache-control', 'no-store');
  return reply.send(res.body);
}
