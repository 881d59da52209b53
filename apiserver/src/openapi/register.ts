import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ResourceDescriptor } from '@mk8s/api';
import { buildGroupVersionDocs, openApiIndex, type GroupVersionDoc, type OpenApiResource } from './documents.js';
import { OPENAPI_V2_PROTOBUF_RESPONSE, minimalOpenApiV2Protobuf, wantsOpenApiV2Protobuf } from './openapi-v2.js';

/** What the documents are built from, read again whenever its generation changes. */
export interface OpenApiSource {
  generation(): number;
  resources(): readonly OpenApiResource[];
}

export interface OpenApiOptions {
  /** A fixed set of resources; one document per group/version. */
  resources?: readonly ResourceDescriptor[];
  /** The server's registry: documents follow it as resources come and go. Wins over `resources`. */
  source?: OpenApiSource;
}

/**
 * Registers GET /openapi/v3 (the index), /openapi/v3/api/v1 and /openapi/v3/apis/<g>/<v>, and
 * /openapi/v2: a definition-less protobuf document for kubectl (see openapi-v2.ts), a 404 Status
 * for any other Accept. Documents are built on first use and again after the source changes
 * (a CRD came or went); a group/version's hash changes with its document.
 * A request whose ?hash= matches the current document is cacheable for ever, like upstream.
 */
export function registerOpenApi(app: FastifyInstance, opts: OpenApiOptions): void {
  const fixed = opts.resources ?? [];
  const source = opts.source;
  let built: { generation: number; docs: Map<string, GroupVersionDoc>; index: Buffer } | undefined;
  const current = () => {
    const generation = source ? source.generation() : 0;
    if (built?.generation === generation) return built;
    const docs = buildGroupVersionDocs(source ? source.resources() : fixed);
    built = { generation, docs: new Map(docs.map((d) => [d.key, d])), index: Buffer.from(JSON.stringify(openApiIndex(docs))) };
    return built;
  };
  // Buffers keep fastify from rewriting the Content-Type.
  const json = (reply: FastifyReply, body: Buffer) => reply.header('content-type', 'application/json').send(body);

  app.get('/openapi/v3', async (_req, reply) => json(reply.header('cache-control', 'no-cache, private'), current().index));
  app.get('/openapi/v3/*', async (req, reply) => {
    const key = (req.params as { '*': string })['*'].replace(/\/$/, '');
    const d = current().docs.get(key);
    if (!d) return notFound(reply);
    const hash = (req.query as Record<string, unknown>)['hash'];
    if (hash === d.hash) {
      reply.header('cache-control', 'public, immutable').header('expires', new Date(Date.now() + 365 * 24 * 3600_000).toUTCString());
    } else {
      reply.header('cache-control', 'no-cache, private');
    }
    reply.header('etag', `"${d.hash}"`);
    return json(reply, d.body);
  });
  app.get('/openapi/v2', async (req, reply) => {
    if (wantsOpenApiV2Protobuf(req.headers.accept)) {
      return reply.header('content-type', OPENAPI_V2_PROTOBUF_RESPONSE).send(minimalOpenApiV2Protobuf());
    }
    return notFound(reply);
  });
}

function notFound(reply: FastifyReply) {
  return reply.code(404).header('content-type', 'application/json').send(Buffer.from(JSON.stringify({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound',
    details: {}, code: 404,
  })));
}
