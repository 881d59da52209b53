import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ResourceDescriptor } from '@mk8s/api';
import { buildGroupVersionDocs, openApiIndex } from './documents.js';
import { OPENAPI_V2_PROTOBUF_RESPONSE, minimalOpenApiV2Protobuf, wantsOpenApiV2Protobuf } from './openapi-v2.js';

export interface OpenApiOptions {
  /** Every served resource (scheme RESOURCES); one document per group/version. */
  resources: readonly ResourceDescriptor[];
}

/**
 * Registers GET /openapi/v3 (the index), /openapi/v3/api/v1 and /openapi/v3/apis/<g>/<v>, and
 * /openapi/v2: a definition-less protobuf document for kubectl (see openapi-v2.ts), a 404 Status
 * for any other Accept. Documents are built once: the resource set is fixed for the life of the server.
 * A request whose ?hash= matches the current document is cacheable for ever, like upstream.
 */
export function registerOpenApi(app: FastifyInstance, opts: OpenApiOptions): void {
  const docs = buildGroupVersionDocs(opts.resources);
  const index = Buffer.from(JSON.stringify(openApiIndex(docs)));
  // Buffers keep fastify from rewriting the Content-Type.
  const json = (reply: FastifyReply, body: Buffer) => reply.header('content-type', 'application/json').send(body);

  app.get('/openapi/v3', async (_req, reply) => json(reply.header('cache-control', 'no-cache, private'), index));
  for (const d of docs) {
    app.get(`/openapi/v3/${d.key}`, async (req, reply) => {
      const hash = (req.query as Record<string, unknown>)['hash'];
      if (hash === d.hash) {
        reply.header('cache-control', 'public, immutable').header('expires', new Date(Date.now() + 365 * 24 * 3600_000).toUTCString());
      } else {
        reply.header('cache-control', 'no-cache, private');
      }
      reply.header('etag', `"${d.hash}"`);
      return json(reply, d.body);
    });
  }
  app.get('/openapi/v2', async (req, reply) => {
    if (wantsOpenApiV2Protobuf(req.headers.accept)) {
      return reply.header('content-type', OPENAPI_V2_PROTOBUF_RESPONSE).send(minimalOpenApiV2Protobuf());
    }
    return reply.code(404).header('content-type', 'application/json').send(Buffer.from(JSON.stringify({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound',
      details: {}, code: 404,
    })));
  });
}
