/**
 * The kubelet API (upstream `pkg/kubelet/server`): /healthz, /pods, /containerLogs, /exec (and
 * /attach) over WebSocket `v5.channel.k8s.io`, /stats/summary, /metrics (the kubelet's registry)
 * and /metrics/cadvisor (per-container series from the runtime's stats, metrics.ts). HTTPS with `tls` (client
 * certificates requested and checked by `auth`, server-auth.ts, before any route: requests and
 * upgrades alike), else plain HTTP with no authentication. Every path resolves a
 * container only among the pods bound to this node and the containers labelled with that pod's
 * uid, so no request can reach another container.
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import type { Logger } from '@mk8s/component-base';
import { queryBool, type Pod } from '@mk8s/api';
import { isNotFound, isFailedPrecondition, type ContainerStatus, type ExecInput, type RuntimeService } from '@mk8s/proto';
import type { PodRuntimeState } from './status.js';
import { createPortForwardHandler } from './portforward.js';
import { kubeletAuth, type KubeletAuthOptions } from './server-auth.js';
import { renderCadvisor } from './metrics.js';
import type { StatsProvider } from './stats-provider.js';
import { summaryToJson } from './stats-summary.js';
import { renderResourceMetrics } from './resource-metrics.js';
import type { Registry } from 'prom-client';

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

export interface KubeletServerOptions {
  port: number;
  host: string;
  runtime: RuntimeService;
  logger: Logger;
  nodeName: string;
  pods: () => Pod[];
  podRuntime: (uid: string) => Promise<PodRuntimeState>;
  /** Builds the server. @default HTTPS with `tls`, else node:http createServer */
  createServer?: () => Server;
  /** Serve HTTPS (PEM contents); clientCA verifies client certificates. @default plain HTTP */
  tls?: { cert: string; key: string; clientCA?: string };
  /** Authentication/authorization of every request (meaningful with tls). @default none: all allowed */
  auth?: Omit<KubeletAuthOptions, 'nodeName'>;
  /** What /metrics serves (authorized as nodes/metrics). @default /metrics answers 404 */
  registry?: Registry;
  /** Builds /stats/summary (nodes/stats) and /metrics/resource (nodes/metrics). @default both answer 404 */
  stats?: Pick<StatsProvider, 'summary'>;
}

class HttpError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string) { super(message); }
}

const statusBody = (e: HttpError) => JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: e.message, reason: e.reason, code: e.code });

/** A push-fed AsyncIterable (exec stdin). */
class Feed<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private ended = false;
  push(x: T): void { if (this.ended) return; if (this.waiter) { const w = this.waiter; this.waiter = undefined; w({ value: x, done: false }); } else this.items.push(x); }
  end(): void { this.ended = true; if (this.waiter && !this.items.length) { const w = this.waiter; this.waiter = undefined; w({ value: undefined, done: true }); } }
  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const x = this.items.shift();
        if (x !== undefined) return Promise.resolve({ value: x, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((r) => { this.waiter = r; });
      },
      return: () => { this.ended = true; return Promise.resolve({ value: undefined, done: true }); },
    };
  }
}

export async function serveKubelet(o: KubeletServerOptions): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const findPod = (ns: string, name: string): Pod => {
    const pod = o.pods().find((p) => p.metadata?.namespace === ns && p.metadata?.name === name);
    if (!pod) throw new HttpError(404, 'NotFound', `pods "${name}" not found`);
    return pod;
  };
  const findContainer = async (ns: string, podName: string, container: string, previous: boolean): Promise<{ pod: Pod; c: ContainerStatus }> => {
    const pod = findPod(ns, podName);
    const specs = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
    const name = container || (specs.length === 1 ? specs[0]!.name : '');
    if (!name) throw new HttpError(400, 'BadRequest', `a container name must be specified for pod ${podName}, choose one of: [${specs.map((s) => s.name).join(' ')}]`);
    if (!specs.some((s) => s.name === name)) throw new HttpError(400, 'BadRequest', `container ${name} is not valid for pod ${podName}`);
    const rt = await o.podRuntime(pod.metadata?.uid ?? '');
    const named = rt.containers.filter((c) => c.metadata.name === name);
    const c = previous ? named[1] : named[0];
    if (!c) {
      if (previous) throw new HttpError(400, 'BadRequest', `previous terminated container "${name}" in pod "${podName}" not found`);
      const st = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].find((s) => s.name === name);
      throw new HttpError(400, 'BadRequest', `container "${name}" in pod "${podName}" is waiting to start: ${st?.state?.waiting?.reason ?? 'ContainerCreating'}`);
    }
    return { pod, c };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://kubelet');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const q = url.searchParams;
    const json = (code: number, body: unknown) => { res.writeHead(code, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
    if (url.pathname === '/healthz') { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok'); return; }
    if (url.pathname === '/pods' || url.pathname === '/pods/') return json(200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: o.pods() });
    if (parts[0] === 'containerLogs' && parts.length === 4) {
      const [, ns, podName, container] = parts as [string, string, string, string];
      const { c } = await findContainer(ns, podName, container, queryBool(q.get('previous')));
      const follow = queryBool(q.get('follow'));
      const tail = q.get('tailLines');
      const since = q.get('sinceSeconds');
      const sinceTime = q.get('sinceTime');
      const limit = q.get('limitBytes') ? Number(q.get('limitBytes')) : Infinity;
      const ac = new AbortController();
      res.on('close', () => ac.abort());
      res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' });
      res.flushHeaders();
      let sent = 0;
      const sinceNs = since ? (Date.now() - Number(since) * 1000) * 1e6 : sinceTime ? Date.parse(sinceTime) * 1e6 : undefined;
      try {
        for await (const chunk of o.runtime.containerLogs(c.id, {
          follow: follow && c.state === 'CONTAINER_RUNNING', timestamps: queryBool(q.get('timestamps')),
          ...(tail !== null && Number(tail) >= 0 ? { tailLines: Number(tail) } : {}), ...(sinceNs ? { sinceTime: sinceNs } : {}),
        }, ac.signal)) {
          const data = sent + chunk.data.length > limit ? chunk.data.subarray(0, limit - sent) : chunk.data;
          sent += data.length;
          res.write(data);
          if (sent >= limit) break;
        }
      } catch (err) {
        if (!ac.signal.aborted) o.logger.warn({ err, container: c.id }, 'Could not stream container logs');
      }
      res.end();
      return;
    }
    if (url.pathname === '/metrics' && o.registry) {
      const text = await o.registry.metrics();
      res.writeHead(200, { 'content-type': o.registry.contentType }); res.end(text); return;
    }
    if (url.pathname === '/metrics/cadvisor') {
      const [containers, sandboxes] = await Promise.all([o.runtime.listContainerStats(), o.runtime.listPodSandboxStats()]);
      const text = await renderCadvisor({ containers, sandboxes, pods: o.pods() });
      res.writeHead(200, { 'content-type': PROMETHEUS_TEXT }); res.end(text); return;
    }
    if ((url.pathname === '/stats/summary' || url.pathname === '/stats/summary/') && o.stats) {
      // upstream: GET, or POST with {"only_cpu_and_memory": true}; the query parameter works for both.
      let only = queryBool(q.get('only_cpu_and_memory'));
      if (req.method === 'POST') {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body = Buffer.concat(chunks).toString('utf8').trim();
        if (body) {
          try { only = (JSON.parse(body) as { only_cpu_and_memory?: boolean }).only_cpu_and_memory === true || only; } catch { throw new HttpError(400, 'BadRequest', 'invalid summary request body'); }
        }
      }
      return json(200, summaryToJson(await o.stats.summary({ onlyCpuAndMemory: only })));
    }
    if (url.pathname === '/metrics/resource' && o.stats) {
      let text: string;
      try {
        text = renderResourceMetrics(await o.stats.summary({ onlyCpuAndMemory: true }), 0);
      } catch (err) {
        o.logger.warn({ err }, 'Could not get summary for resource metrics');
        text = renderResourceMetrics(undefined, 1);
      }
      res.writeHead(200, { 'content-type': PROMETHEUS_TEXT }); res.end(text); return;
    }
    throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${url.pathname})`);
  };

  const tls = o.tls;
  const server = o.createServer?.() ?? (tls
    // Certificates are requested but optional at the TLS layer: a missing or bad one is a 401 from auth, not a handshake error.
    ? createHttpsServer({ cert: tls.cert, key: tls.key, ...(tls.clientCA ? { ca: tls.clientCA } : {}), requestCert: true, rejectUnauthorized: false }) as unknown as Server
    : createServer());
  const check = o.auth ? kubeletAuth({ ...o.auth, nodeName: o.nodeName }) : undefined;
  const guard = async (req: IncomingMessage): Promise<void> => {
    const r = await check?.(req);
    if (r && 'refusal' in r) throw new HttpError(r.refusal.code, r.refusal.reason, r.refusal.message);
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    guard(req).then(() => handle(req, res)).catch((err: unknown) => {
      const e = err instanceof HttpError ? err : new HttpError(500, 'InternalError', err instanceof Error ? err.message : String(err));
      if (e.code >= 500) o.logger.warn({ err }, 'Kubelet API request failed');
      if (!res.headersSent) { res.writeHead(e.code, { 'content-type': 'application/json' }); res.end(statusBody(e)); } else res.end();
    });
  });

  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : protocols.has('v4.channel.k8s.io') ? 'v4.channel.k8s.io' : false),
  });
  const portForward = createPortForwardHandler({ logger: o.logger, findPod: (ns, name) => o.pods().find((p) => p.metadata?.namespace === ns && p.metadata?.name === name) });
  const rejectUpgrade = (socket: Duplex, e: HttpError) => {
    const body = statusBody(e);
    socket.end(`HTTP/1.1 ${e.code} ${e.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    guard(req).then(() => onUpgrade(req, socket, head), (err: unknown) => rejectUpgrade(socket, err instanceof HttpError ? err : new HttpError(500, 'InternalError', String(err))));
  });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://kubelet');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const reject = (e: HttpError) => {
      const body = statusBody(e);
      socket.end(`HTTP/1.1 ${e.code} ${e.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    };
    if (parts[0] === 'portForward') return portForward.handleUpgrade(req, socket, head);
    if ((parts[0] !== 'exec' && parts[0] !== 'attach') || parts.length !== 4) return reject(new HttpError(404, 'NotFound', 'not found'));
    const [kind, ns, podName, container] = parts as [string, string, string, string];
    findContainer(ns, podName, container, false).then(({ c }) => {
      if (c.state !== 'CONTAINER_RUNNING') throw new HttpError(400, 'BadRequest', `container ${c.metadata.name} is not running`);
      const q = url.searchParams;
      const cmd = q.getAll('command');
      if (kind === 'exec' && cmd.length === 0) throw new HttpError(400, 'BadRequest', 'you must specify at least 1 command');
      wss.handleUpgrade(req, socket, head, (ws) => runExec(ws, {
        containerId: c.id,
        // attach: an empty cmd makes the runtime attach to the main process (RuntimeService.exec).
        cmd: kind === 'exec' ? cmd : [],
        // Booleans as upstream's parameter codec reads them (True, 1, true...); stdout defaults on
        // for callers that omit it (every client sends it explicitly).
        tty: queryBool(q.get('tty')),
        stdin: queryBool(q.get('stdin')),
        stdout: queryBool(q.get('stdout'), true),
        stderr: queryBool(q.get('stderr')),
      }));
    }).catch((err: unknown) => reject(err instanceof HttpError ? err : new HttpError(500, 'InternalError', String(err))));
  };

  const runExec = (ws: WebSocket, r: { containerId: string; cmd: string[]; tty: boolean; stdin: boolean; stdout: boolean; stderr: boolean }) => {
    const v5 = ws.protocol === 'v5.channel.k8s.io';
    const input = new Feed<ExecInput>();
    const ac = new AbortController();
    const send = (ch: number, data: Buffer) => { if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([ch]), data])); };
    ws.on('message', (raw: RawData) => {
      const b = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw as ArrayBuffer);
      if (b.length === 0) return;
      const ch = b[0]!;
      if (ch === 0) input.push({ stdin: b.subarray(1) });
      else if (ch === 4) {
        try { const s = JSON.parse(b.subarray(1).toString('utf8')) as { Width: number; Height: number }; input.push({ resize: { width: s.Width, height: s.Height } }); } catch { /* ignore a bad resize */ }
      } else if (ch === 255 && v5 && b[1] === 0) { input.push({ closeStdin: true }); input.end(); }
    });
    ws.on('close', () => { input.end(); ac.abort(); });
    o.runtime.exec({ containerId: r.containerId, cmd: r.cmd, tty: r.tty, stdin: r.stdin, stdout: r.stdout, stderr: r.stderr && !r.tty }, {
      ...(r.stdin ? { input } : {}),
      onStdout: (d) => send(1, d),
      onStderr: (d) => send(2, d),
      signal: ac.signal,
    }).then(({ exitCode }) => {
      const st = exitCode === 0 ? { metadata: {}, status: 'Success' } : {
        metadata: {}, status: 'Failure', reason: 'NonZeroExitCode', message: `command terminated with non-zero exit code: error executing command [${r.cmd.join(' ')}], exit code ${exitCode}`,
        details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
      };
      send(3, Buffer.from(JSON.stringify(st)));
      ws.close(1000);
    }, (err: unknown) => {
      if (ac.signal.aborted) return;
      const msg = err instanceof Error ? err.message : String(err);
      const reason = isNotFound(err) ? 'NotFound' : isFailedPrecondition(err) ? 'BadRequest' : 'InternalError';
      send(3, Buffer.from(JSON.stringify({ metadata: {}, status: 'Failure', reason, message: msg })));
      ws.close(1000);
    });
  };

  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(o.port, o.host, () => resolve()); });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : o.port;
  return {
    server, port,
    close: () => new Promise<void>((r) => { portForward.close(); for (const c of wss.clients) c.terminate(); server.closeAllConnections(); server.close(() => r()); }),
  };
}
