import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceDescriptor } from '@mk8s/api';
import {
  aggregatedContentType, aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions,
  groupVersions, negotiateAggregated, type AggregatedVersion,
} from './documents.js';
import { SERVER_VERSION } from './version.js';

export interface DiscoveryOptions {
  /** Every served resource, in the order categories should expand (scheme RESOURCES). */
  resources: readonly ResourceDescriptor[];
}

/**
 * Registers /version, /api, /apis, /apis/<group>, /api/v1 and /apis/<group>/<version>.
 * /api and /apis answer aggregated discovery (apidiscovery.k8s.io v2, or v2beta1) when the Accept
 * header asks for it, with upstream's exact Content-Type, and the legacy documents otherwise.
 * The documents are computed once: the resource set is fixed for the life of the server.
 */
export function registerDiscovery(app: FastifyInstance, opts: DiscoveryOptions): void {
  const gvs = groupVersions(opts.resources);
  // Buffers, because fastify rewrites the Content-Type of string payloads (quotes the
  // parameters, appends a charset) and client-go matches the aggregated one by its parameters.
  const send = (reply: FastifyReply, body: Buffer, contentType = 'application/json') =>
    reply.header('content-type', contentType).header('vary', 'Accept').send(body);
  const json = (reply: FastifyReply, body: unknown) => send(reply, Buffer.from(JSON.stringify(body)));
  const aggregated = new Map<string, { body: Buffer; etag: string }>();
  const aggregatedDoc = (legacy: boolean, v: AggregatedVersion) => {
    const key = `${legacy}/${v}`;
    let doc = aggregated.get(key);
    if (doc === undefined) {
      const body = Buffer.from(JSON.stringify(aggregatedDiscovery(gvs, legacy, v)));
      doc = { body, etag: `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"` };
      aggregated.set(key, doc);
    }
    return doc;
  };
  const root = (legacy: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const v = negotiateAggregated(req.headers.accept);
    if (v) {
      // Like upstream: an ETag, and 304 for a matching If-None-Match (kubectl's HTTP cache revalidates).
      const doc = aggregatedDoc(legacy, v);
      reply.header('etag', doc.etag);
      if (req.headers['if-none-match'] === doc.etag) return reply.code(304).header('vary', 'Accept').send();
      return send(reply, doc.body, aggregatedContentType(v));
    }
    return json(reply, legacy ? apiVersions(gvs, req.host) : apiGroupList(gvs));
  };

  app.get('/version', async (_req, reply) => json(reply, SERVER_VERSION));
  app.get('/api', root(true));
  app.get('/apis', root(false));
  for (const gv of gvs) {
    const list = Buffer.from(JSON.stringify(apiResourceList(gv)));
    const path = gv.group ? `/apis/${gv.group}/${gv.version}` : `/api/${gv.version}`;
    app.get(path, async (_req, reply) => send(reply, list));
  }
  for (const group of new Set(gvs.map((g) => g.group).filter((g) => g !== ''))) {
    const doc = Buffer.from(JSON.stringify(apiGroup(group, gvs)));
    app.get(`/apis/${group}`, async (_req, reply) => send(reply, doc));
  }
}
