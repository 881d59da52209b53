import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceDescriptor } from '@mk8s/api';
import {
  discoveredFromDescriptors, type DiscoveredResource, type GroupVersion,
  aggregatedContentType, aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions,
  groupVersions, negotiateAggregated, type AggregatedVersion,
} from './documents.js';
import { SERVER_VERSION } from './version.js';

/** What discovery is built from, read again whenever its generation changes. */
export interface DiscoverySource {
  /** Changes whenever the served resources change. */
  generation(): number;
  /** Every served resource, in the order categories should expand. */
  resources(): readonly DiscoveredResource[];
}

export interface DiscoveryOptions {
  /** A fixed set of resources (subresources as the well-known table reports them). */
  resources?: readonly ResourceDescriptor[];
  /** The server's registry: the documents follow it as resources come and go. Wins over `resources`. */
  source?: DiscoverySource;
}

interface Docs {
  generation: number;
  gvs: GroupVersion[];
  lists: Map<string, Buffer>;
  groups: Map<string, Buffer>;
  aggregated: Map<string, { body: Buffer; etag: string }>;
}

/**
 * Registers /version, /api, /apis, /apis/<group>, /api/v1 and /apis/<group>/<version>.
 * /api and /apis answer aggregated discovery (apidiscovery.k8s.io v2, or v2beta1) when the Accept
 * header asks for it, with upstream's exact Content-Type, and the legacy documents otherwise.
 * Documents are built on first use and again after the source's generation moves (a CRD came or went).
 */
export function registerDiscovery(app: FastifyInstance, opts: DiscoveryOptions): void {
  const fixed = discoveredFromDescriptors(opts.resources ?? []);
  const source: DiscoverySource = opts.source ?? { generation: () => 0, resources: () => fixed };
  let docs: Docs | undefined;
  const current = (): Docs => {
    const generation = source.generation();
    if (docs?.generation === generation) return docs;
    const gvs = groupVersions(source.resources());
    const lists = new Map<string, Buffer>();
    for (const gv of gvs) lists.set(gv.group ? `/apis/${gv.group}/${gv.version}` : `/api/${gv.version}`, Buffer.from(JSON.stringify(apiResourceList(gv))));
    const groups = new Map<string, Buffer>();
    for (const group of new Set(gvs.map((g) => g.group).filter((g) => g !== ''))) groups.set(group, Buffer.from(JSON.stringify(apiGroup(group, gvs))));
    docs = { generation, gvs, lists, groups, aggregated: new Map() };
    return docs;
  };
  // Buffers, because fastify rewrites the Content-Type of string payloads (quotes the
  // parameters, appends a charset) and client-go matches the aggregated one by its parameters.
  const send = (reply: FastifyReply, body: Buffer, contentType = 'application/json') =>
    reply.header('content-type', contentType).header('vary', 'Accept').send(body);
  const json = (reply: FastifyReply, body: unknown) => send(reply, Buffer.from(JSON.stringify(body)));
  const aggregatedDoc = (d: Docs, legacy: boolean, v: AggregatedVersion) => {
    const key = `${legacy}/${v}`;
    let doc = d.aggregated.get(key);
    if (doc === undefined) {
      const body = Buffer.from(JSON.stringify(aggregatedDiscovery(d.gvs, legacy, v)));
      doc = { body, etag: `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"` };
      d.aggregated.set(key, doc);
    }
    return doc;
  };
  const root = (legacy: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const d = current();
    const v = negotiateAggregated(req.headers.accept);
    if (v) {
      // Like upstream: an ETag, and 304 for a matching If-None-Match (kubectl's HTTP cache revalidates).
      const doc = aggregatedDoc(d, legacy, v);
      reply.header('etag', doc.etag);
      if (req.headers['if-none-match'] === doc.etag) return reply.code(304).header('vary', 'Accept').send();
      return send(reply, doc.body, aggregatedContentType(v));
    }
    return json(reply, legacy ? apiVersions(d.gvs, req.host) : apiGroupList(d.gvs));
  };
  const notFound = (reply: FastifyReply) => reply.code(404).header('content-type', 'application/json').send(Buffer.from(JSON.stringify({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404,
  })));
  const byPath = async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0]!.replace(/\/$/, '');
    const body = current().lists.get(path);
    return body ? send(reply, body) : notFound(reply);
  };

  app.get('/version', async (_req, reply) => json(reply, SERVER_VERSION));
  app.get('/api', root(true));
  app.get('/apis', root(false));
  app.get('/api/:version', byPath);
  app.get('/apis/:group/:version', byPath);
  app.get('/apis/:group', async (req, reply) => {
    const body = current().groups.get((req.params as { group: string }).group);
    return body ? send(reply, body) : notFound(reply);
  });
}
