/**
 * authentication.k8s.io/v1 TokenReview and SelfSubjectReview (pkg/registry/authentication):
 * create-only, never stored. TokenReview runs spec.token through the server's authenticators (how a
 * component or a test checks who a ServiceAccount token belongs to); SelfSubjectReview answers who
 * the caller is (`kubectl auth whoami`).
 */
import type { IncomingMessage } from 'node:http';
import { ApiError } from '@mk8s/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator, UserInfo } from '../auth/authentication.js';
import { sendError } from '../endpoints/status.js';

const BASE = '/apis/authentication.k8s.io/v1';

function decodeJson(req: FastifyRequest): Record<string, unknown> {
  const body = req.body as Buffer | undefined;
  if (!body || body.length === 0) return {};
  try {
    const v: unknown = JSON.parse(body.toString('utf8'));
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    return v as Record<string, unknown>;
  } catch (err) {
    throw new ApiError('BadRequest', `couldn't decode the request body: ${(err as Error).message}`);
  }
}

const userInfo = (u: UserInfo) => ({ username: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups, ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}) });

/** Authenticates a bare token with the chain (no opinion / refused → not authenticated). */
export async function reviewToken(authenticators: readonly Authenticator[], token: string): Promise<UserInfo | undefined> {
  // Only token authenticators can answer: a request carrying nothing but the bearer header.
  const fake = { headers: { authorization: `Bearer ${token}` }, headersDistinct: { authorization: [`Bearer ${token}`] }, socket: {}, url: '/' } as unknown as IncomingMessage;
  for (const a of authenticators) {
    // Not token authenticators: a client certificate or a proxy's headers are no token.
    if (a.name === 'x509' || a.name === 'requestheader' || /anonymous/i.test(a.name)) continue;
    try {
      const u = await a.authenticate(fake);
      if (u) return u;
    } catch { return undefined; }
  }
  return undefined;
}

export function registerAuthenticationApi(app: FastifyInstance, o: { authenticators: readonly Authenticator[] }): void {
  app.post(`${BASE}/tokenreviews`, async (req: FastifyRequest, reply: FastifyReply) => {
    try {
      const body = decodeJson(req);
      const spec = (body['spec'] ?? {}) as { token?: string; audiences?: string[] };
      if (!spec.token) throw new ApiError('Invalid', 'TokenReview.authentication.k8s.io "" is invalid: spec.token: Required value');
      const user = await reviewToken(o.authenticators, spec.token);
      return reply.code(201).type('application/json').send({
        kind: 'TokenReview', apiVersion: 'authentication.k8s.io/v1', metadata: { creationTimestamp: null }, spec,
        status: user ? { authenticated: true, user: userInfo(user) } : { user: {}, error: 'token could not be authenticated' },
      });
    } catch (err) { return sendError(reply, err); }
  });
  app.post(`${BASE}/selfsubjectreviews`, async (req: FastifyRequest, reply: FastifyReply) => {
    // The body (JSON or protobuf, kubectl sends the latter) carries nothing but the kind.
    try {
      return reply.code(201).type('application/json').send({
        kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1', metadata: { creationTimestamp: null },
        status: { userInfo: userInfo(req.user) },
      });
    } catch (err) { return sendError(reply, err); }
  });
}
