/**
 * pods/log, pods/exec and pods/attach: the apiserver resolves the pod's node and proxies to that
 * node's kubelet API (upstream registry/core/pod/rest/log.go, subresources.go). Logs are a
 * streamed HTTP GET; exec/attach are WebSocket upgrades relayed byte for byte, so the kubelet
 * speaks v5.channel.k8s.io (and answers pings) directly with the client.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { ApiError, Nodes, Pods, type KubeObject } from '@mk8s/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from '../registry/index.js';
import { JSON_CONTENT_TYPE, toApiError } from './status.js';
import type { ResourceRequestInfo } from './request-info.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Query parameters the kubelet's /containerLogs understands. */
const LOG_PARAMS = ['follow', 'previous', 'sinceSeconds', 'sinceTime', 'timestamps', 'tailLines', 'limitBytes'];

export interface KubeletTarget { host: string; port: number; container: string }

/**
 * How the apiserver reaches kubelets (upstream --kubelet-client-certificate, --kubelet-client-key,
 * --kubelet-certificate-authority), PEM contents. With a client certificate or a CA the kubelet
 * is spoken to over HTTPS; the kubelet's serving certificate is verified only against `ca` (as
 * upstream, which skips verification without --kubelet-certificate-authority). Without either:
 * plain HTTP (clusters whose kubelets serve no TLS).
 */
export interface KubeletClientConfig { ca?: string; cert?: string; key?: string }

/** Opens one request to a kubelet with the apiserver's kubelet client identity. */
function kubeletRequest(cfg: KubeletClientConfig | undefined, o: RequestOptions, cb?: (res: IncomingMessage) => void) {
  if (!cfg || (!cfg.cert && !cfg.ca)) return { req: cb ? httpRequest(o, cb) : httpRequest(o), scheme: 'http' };
  const tls = {
    ...o,
    ...(cfg.ca ? { ca: cfg.ca } : {}), ...(cfg.cert ? { cert: cfg.cert } : {}), ...(cfg.key ? { key: cfg.key } : {}),
    // The serving certificate is checked against the node's address (an IP SAN).
    rejectUnauthorized: !!cfg.ca,
  };
  return { req: cb ? httpsRequest(tls, cb) : httpsRequest(tls), scheme: 'https' };
}

/**
 * Finds where a pod's container runs. container '' picks the default container (annotation
 * kubectl.kubernetes.io/default-container, or the only one). 400 BadRequest as upstream when the
 * pod is unscheduled or the container ambiguous/unknown.
 */
export async function resolveKubeletTarget(registry: Registry, namespace: string, podName: string, container: string): Promise<KubeletTarget> {
  const pod = await registry.get(Pods)!.get(namespace, podName);
  const spec = (pod['spec'] ?? {}) as Obj;
  const names = [...((spec['initContainers'] ?? []) as Obj[]), ...((spec['containers'] ?? []) as Obj[]), ...((spec['ephemeralContainers'] ?? []) as Obj[])]
    .map((c) => String(c['name']));
  let c = container;
  if (!c) {
    const annotated = pod.metadata.annotations?.['kubectl.kubernetes.io/default-container'];
    const main = ((spec['containers'] ?? []) as Obj[]).map((x) => String(x['name']));
    if (annotated && names.includes(annotated)) c = annotated;
    else if (main.length === 1) c = main[0]!;
    else throw new ApiError('BadRequest', `a container name must be specified for pod ${podName}, choose one of: [${main.join(' ')}]`);
  } else if (!names.includes(c)) {
    throw new ApiError('BadRequest', `container ${c} is not valid for pod ${podName}`);
  }
  const nodeName = spec['nodeName'] as string | undefined;
  if (!nodeName) throw new ApiError('BadRequest', `pod ${podName} does not have a host assigned`);
  const node = await registry.get(Nodes)!.get('', nodeName);
  const { host, port } = kubeletAddress(node);
  return { host, port, container: c };
}

/**
 * The kubelet of the node a pod is bound to, for subresources that name no container
 * (portforward). 400 BadRequest when the pod is unscheduled, as upstream.
 */
export async function resolvePodKubelet(registry: Registry, namespace: string, podName: string): Promise<{ host: string; port: number }> {
  const pod = await registry.get(Pods)!.get(namespace, podName);
  const nodeName = (pod['spec'] as Obj | undefined)?.['nodeName'] as string | undefined;
  if (!nodeName) throw new ApiError('BadRequest', `pod ${podName} does not have a host assigned`);
  return kubeletAddress(await registry.get(Nodes)!.get('', nodeName));
}

/**
 * Subresources served by relaying an HTTP upgrade to the kubelet: exec/attach (WebSocket
 * v5.channel.k8s.io) and portforward (WebSocket-tunnelled SPDY on GET, raw SPDY/3.1 on POST).
 */
const UPGRADE_SUBRESOURCES = new Set(['exec', 'attach', 'portforward']);

/** The kubelet endpoint of a node: InternalIP (else ExternalIP, Hostname) and daemonEndpoints port. */
export function kubeletAddress(node: KubeObject): { host: string; port: number } {
  const status = (node['status'] ?? {}) as Obj;
  const addrs = (status['addresses'] ?? []) as Obj[];
  const pick = (t: string) => addrs.find((a) => a['type'] === t)?.['address'] as string | undefined;
  const host = pick('InternalIP') ?? pick('ExternalIP') ?? pick('Hostname');
  if (!host) throw new ApiError('BadRequest', `node ${node.metadata.name} has no address to reach its kubelet`);
  const port = Number(status['daemonEndpoints']?.['kubeletEndpoint']?.['Port'] ?? 10250) || 10250;
  return { host, port };
}

/** GET …/pods/{name}/log: streams the kubelet's /containerLogs answer back (headers flushed at once). */
export async function proxyLogs(registry: Registry, info: ResourceRequestInfo, req: FastifyRequest, reply: FastifyReply, kubelet?: KubeletClientConfig): Promise<void> {
  const q = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  const t = await resolveKubeletTarget(registry, info.namespace, info.name, q.get('container') ?? '');
  const out = new URLSearchParams();
  for (const k of LOG_PARAMS) { const v = q.get(k); if (v !== null) out.set(k, v); }
  const path = `/containerLogs/${enc(info.namespace)}/${enc(info.name)}/${enc(t.container)}${out.size ? `?${out}` : ''}`;
  const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
    const { req: r, scheme } = kubeletRequest(kubelet, { host: t.host, port: t.port, path, method: 'GET' }, resolve);
    r.on('error', (err) => reject(new ApiError('InternalError', `Get "${scheme}://${t.host}:${t.port}${path}": ${err.message}`)));
    r.end();
  });
  reply.hijack();
  const raw = reply.raw;
  const ok = upstream.statusCode === 200;
  raw.writeHead(upstream.statusCode ?? 500, {
    'content-type': ok ? 'text/plain' : upstream.headers['content-type'] ?? JSON_CONTENT_TYPE,
    'transfer-encoding': 'chunked', 'cache-control': 'no-cache, private',
  });
  raw.flushHeaders();
  raw.on('close', () => upstream.destroy());
  upstream.pipe(raw);
  await new Promise<void>((resolve) => { upstream.on('end', resolve); upstream.on('close', resolve); upstream.on('error', () => { raw.destroy(); resolve(); }); });
}

const enc = encodeURIComponent;

/** Response headers a proxy must not pass on (hop-by-hop, RFC 7230 §6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * …/nodes/{name}/proxy/{path}: the request passed to that node's kubelet API at {path} with the
 * apiserver's kubelet client identity (upstream registry/core/node/rest/proxy.go), the answer
 * streamed back as it comes (status, content type, body). How `kubectl get --raw
 * /api/v1/nodes/<n>/proxy/stats/summary` and `/metrics/resource` reach a kubelet.
 */
export async function proxyNode(registry: Registry, info: ResourceRequestInfo, req: FastifyRequest, reply: FastifyReply, kubelet?: KubeletClientConfig): Promise<void> {
  const node = await registry.get(Nodes)!.get('', info.name);
  const { host, port } = kubeletAddress(node);
  const q = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
  const path = `${info.subpath || '/'}${q}`;
  const body = req.body === undefined || req.body === null ? undefined
    : Buffer.isBuffer(req.body) ? req.body : Buffer.from(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
  const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
    const headers: Record<string, string> = {};
    const ct = req.headers['content-type'];
    if (ct && body) headers['content-type'] = ct;
    if (req.headers['accept']) headers['accept'] = String(req.headers['accept']);
    const { req: r, scheme } = kubeletRequest(kubelet, { host, port, path, method: req.method, headers }, resolve);
    r.on('error', (err) => reject(new ApiError('ServiceUnavailable', `error trying to reach service: ${err.message} (${scheme}://${host}:${port})`)));
    r.end(body);
  });
  reply.hijack();
  const raw = reply.raw;
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined && !HOP_BY_HOP.has(k) && k !== 'content-length') out[k] = v;
  raw.writeHead(upstream.statusCode ?? 502, out);
  raw.on('close', () => upstream.destroy());
  upstream.pipe(raw);
  await new Promise<void>((resolve) => { upstream.on('end', resolve); upstream.on('close', resolve); upstream.on('error', () => { raw.destroy(); resolve(); }); });
}

/**
 * Handles an HTTP upgrade for pods/exec|attach|portforward: resolves the kubelet and relays the upgrade and
 * then the raw sockets. Anything else is answered with a Status and closed. `check` runs the
 * authentication/authorization stages (it throws an ApiError to refuse).
 */
export async function proxyUpgrade(registry: Registry, info: ResourceRequestInfo, req: IncomingMessage, socket: Duplex, head: Buffer, kubelet?: KubeletClientConfig): Promise<void> {
  try {
    if (info.descriptor !== Pods || !UPGRADE_SUBRESOURCES.has(info.subresource) || !info.name) {
      throw new ApiError('NotFound', 'the server could not find the requested resource');
    }
    const url = req.url ?? '/';
    const q = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
    // portforward names no container: ports travel inside the SPDY streams (kubelet /portForward/{ns}/{pod}).
    const portForward = info.subresource === 'portforward';
    const t = portForward ? { ...await resolvePodKubelet(registry, info.namespace, info.name), container: '' }
      : await resolveKubeletTarget(registry, info.namespace, info.name, q.get('container') ?? '');
    q.delete('container');
    // The channel protocol names its ports in the query (PodPortForwardOptions.ports → the kubelet's port).
    const ports = new URLSearchParams();
    for (const p of q.getAll('ports')) ports.append('port', p);
    const path = portForward ? `/portForward/${enc(info.namespace)}/${enc(info.name)}${ports.size ? `?${ports}` : ''}`
      : `/${info.subresource}/${enc(info.namespace)}/${enc(info.name)}/${enc(t.container)}${q.size ? `?${q}` : ''}`;
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && k !== 'host' && k !== 'authorization') headers[k] = v;
    headers['host'] = `${t.host}:${t.port}`;
    const { req: up } = kubeletRequest(kubelet, { host: t.host, port: t.port, path, method: req.method ?? 'GET', headers });
    up.on('upgrade', (res, upSocket, upHead) => {
      socket.write(statusLine(res) + rawHeaders(res) + '\r\n');
      if (upHead.length) socket.write(upHead);
      if (head.length) upSocket.write(head);
      const destroyBoth = () => { socket.destroy(); upSocket.destroy(); };
      socket.on('error', destroyBoth); upSocket.on('error', destroyBoth);
      socket.on('close', () => upSocket.destroy()); upSocket.on('close', () => socket.destroy());
      socket.pipe(upSocket); upSocket.pipe(socket);
    });
    up.on('response', (res) => {
      // The kubelet refused the upgrade: relay its answer (a Status) and close.
      socket.write(statusLine(res) + rawHeaders(res, ['transfer-encoding', 'connection']) + 'connection: close\r\n\r\n');
      res.pipe(socket);
    });
    up.on('error', (err) => writeStatus(socket, new ApiError('InternalError', `error dialing backend: ${err.message}`)));
    up.end();
  } catch (err) {
    writeStatus(socket, toApiError(err));
  }
}

function statusLine(res: IncomingMessage): string {
  return `HTTP/1.1 ${res.statusCode ?? 500} ${res.statusMessage ?? ''}\r\n`;
}

function rawHeaders(res: IncomingMessage, skip: string[] = []): string {
  let out = '';
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    if (skip.includes(res.rawHeaders[i]!.toLowerCase())) continue;
    out += `${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`;
  }
  return out;
}

/** Answers a raw upgrade socket with a Status and closes it. */
export function writeStatus(socket: Duplex, err: ApiError): void {
  const body = JSON.stringify(err.toStatus());
  if (!socket.writable) { socket.destroy(); return; }
  socket.end(`HTTP/1.1 ${err.code} ${err.reason}\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
