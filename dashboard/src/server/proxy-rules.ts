/**
 * GET /mk8s/v1/namespaces/:namespace/services/:name/proxy-rules[?nodes=a,b]: what kube-proxy
 * programmed for a Service on each node (iptables-save in the node's netns), the evidence of the
 * chain view's kube-proxy link that the API does not expose. The dashboard runs as root on the
 * machine that runs the nodes (local mode), so it could read any node's rules; it answers only
 * a caller whose own token may GET that Service (asked of the apiserver, nothing of the
 * dashboard's), and only names that are DNS labels and nodes with a netns here reach `ip`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDNS1035Label, isDNS1123Label } from '@mk8s/api';
import type { ProxyEvidence } from '@mk8s/api/trace';
import { localNodes, readNodeProxyEvidence, type NodeReadOptions } from '@mk8s/api/trace-node';
import { bearerToken } from './security.js';
import { failure } from './status.js';
import type { Upstream } from './upstream.js';

export const PROXY_RULES_PATH = '/mk8s/v1/namespaces/:namespace/services/:name/proxy-rules';

/** Reads kube-proxy's rules on this machine; `nodeProxyRulesReader` (create-dashboard.ts) is the real one. */
export interface ProxyRulesReader {
  /**
   * The nodes whose netns this process can read, asked per request (nodes come and go);
   * undefined or empty when it can read none (not root, or compose / VM mode: no netns here).
   */
  nodes(): Promise<ReadonlySet<string> | undefined>;
  /** The evidence for service on each of nodes (all from nodes()). Never rejects: a failed read is evidence. */
  read(nodes: readonly string[], service: { namespace: string; name: string }): Promise<Record<string, ProxyEvidence>>;
}

/** The real reader: `ip netns` and `iptables-save` through @mk8s/api/trace-node (the code `mkctl trace` runs). */
export function nodeProxyRulesReader(o: NodeReadOptions = {}): ProxyRulesReader {
  return {
    nodes: () => localNodes(o),
    async read(nodes, service) {
      const out: Record<string, ProxyEvidence> = {};
      // One node at a time, as mkctl does: iptables-save takes the xtables lock.
      for (const n of nodes) {
        const [ev] = await readNodeProxyEvidence(n, [service], o);
        if (ev) out[n] = ev;
      }
      return out;
    },
  };
}

/** The answer's body. */
export interface ProxyRules {
  kind: 'ProxyRules';
  apiVersion: 'mk8s.io/v1';
  namespace: string;
  name: string;
  /** node → what its kube-proxy programmed for the Service. */
  nodes: Record<string, ProxyEvidence>;
}

/** Most nodes one request may name (each costs an iptables-save). */
const MAX_NODES = 64;
/** Largest Service (or Status) body read back from the apiserver. */
const MAX_UPSTREAM_BYTES = 1 << 20;

/** Why the parameters are refused (undefined: valid), before anything is read. */
export function invalidProxyRulesParams(namespace: string, name: string, nodes: readonly string[]): string | undefined {
  if (isDNS1123Label(namespace).length) return `namespace ${JSON.stringify(namespace)} is not a DNS label`;
  if (isDNS1035Label(name).length) return `service name ${JSON.stringify(name)} is not a DNS-1035 label`;
  if (nodes.length > MAX_NODES) return `at most ${MAX_NODES} nodes`;
  const bad = nodes.find((n) => isDNS1123Label(n).length > 0);
  return bad === undefined ? undefined : `node ${JSON.stringify(bad)} is not a DNS label`;
}

/** ?nodes=a,b (or repeated): the names, trimmed, empty ones dropped, duplicates once. */
export function parseNodesParam(q: unknown): string[] {
  const raw = typeof q === 'string' ? [q] : Array.isArray(q) ? q.filter((x): x is string => typeof x === 'string') : [];
  return [...new Set(raw.flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean))];
}

async function readAll(body: AsyncIterable<unknown>): Promise<string> {
  let out = '';
  for await (const c of body) {
    out += String(c);
    if (out.length > MAX_UPSTREAM_BYTES) throw new Error('apiserver answer too large');
  }
  return out;
}

export function registerProxyRules(app: FastifyInstance, o: { upstream: Upstream; reader: ProxyRulesReader | undefined; userAgent: string }): void {
  app.get(PROXY_RULES_PATH, async (req: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'no-store');
    const token = bearerToken(req.headers.authorization);
    if (!token) return reply.code(401).send(failure(401, 'Unauthorized', 'the dashboard has no access of its own: log in with a bearer token (mkctl dashboard --url)'));
    const { namespace, name } = req.params as { namespace: string; name: string };
    const wanted = parseNodesParam((req.query as Record<string, unknown>)['nodes']);
    const invalid = invalidProxyRulesParams(namespace, name, wanted);
    if (invalid) return reply.code(400).send(failure(400, 'BadRequest', invalid));

    // Authorization is the apiserver's: the caller's own token must be able to GET the Service.
    let status: number; let text: string;
    try {
      const ac = new AbortController();
      reply.raw.on('close', () => ac.abort());
      const res = await o.upstream({
        method: 'GET', path: `/api/v1/namespaces/${namespace}/services/${name}`, signal: ac.signal,
        headers: { authorization: `Bearer ${token}`, 'user-agent': o.userAgent, accept: 'application/json' },
      });
      status = res.status;
      text = await readAll(res.body);
    } catch (err) {
      req.log.warn({ err: { message: (err as Error).message } }, 'Could not reach the apiserver');
      return reply.code(502).send(failure(502, 'ServiceUnavailable', 'the apiserver is not reachable'));
    }
    if (status !== 200) {
      // The apiserver's own Status (Forbidden, NotFound, Unauthorized) is the answer.
      let body: unknown;
      try { body = JSON.parse(text); } catch { body = undefined; }
      const isStatus = (body as { kind?: string } | undefined)?.kind === 'Status';
      return reply.code(status).send(isStatus ? body : failure(status, status === 403 ? 'Forbidden' : status === 404 ? 'NotFound' : 'InternalError', text.slice(0, 500) || `apiserver answered ${status}`));
    }

    const reader = o.reader;
    const local = reader ? await reader.nodes().catch(() => undefined) : undefined;
    if (!reader || !local || local.size === 0) {
      return reply.code(501).send(failure(501, 'NotImplemented', 'kube-proxy\'s rules are not readable by this dashboard: it reads them as root in each node\'s network namespace on the machine that runs the nodes (local mode), not in compose or VM mode'));
    }
    const nodes = wanted.length ? wanted : [...local].sort();
    const unknown = nodes.find((n) => !local.has(n));
    if (unknown !== undefined) return reply.code(400).send(failure(400, 'BadRequest', `node ${unknown} has no network namespace mk8s-${unknown} on this machine`));
    const body: ProxyRules = { kind: 'ProxyRules', apiVersion: 'mk8s.io/v1', namespace, name, nodes: await reader.read(nodes, { namespace, name }) };
    return reply.code(200).send(body);
  });
}
