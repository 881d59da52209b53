/**
 * The kubelet's port-forward endpoint, `/portForward/{namespace}/{pod}[/{uid}]` (upstream
 * pkg/kubelet/cri/streaming/portforward/httpstream.go and websocket.go, served by
 * pkg/kubelet/server). kubectl reaches it through the apiserver's pods/portforward proxy with
 * either upgrade it offers:
 *   - GET `Upgrade: websocket`, subprotocol `SPDY/3.1+portforward.k8s.io`: SPDY frames tunnelled
 *     in binary WebSocket messages. Upstream the apiserver unwraps this tunnel and speaks plain
 *     SPDY to the kubelet; here the apiserver relays bytes and the kubelet accepts both forms.
 *   - POST `Upgrade: SPDY/3.1`, `X-Stream-Protocol-Version: portforward.k8s.io`: SPDY on the socket.
 *   - GET `Upgrade: websocket`, subprotocol `v4.channel.k8s.io` (or `v4.base64.channel.k8s.io`, or
 *     none), `?port=N` repeated: the channel protocol client libraries speak (the Python client,
 *     client-node; upstream portforward/websocket.go). Channel 2i carries port i's data, 2i+1
 *     its errors; each channel's first message is the port, 2 bytes little-endian. One
 *     connection to the pod per port; the WebSocket closes when all of them have ended.
 *
 * Per forwarded connection the client opens a pair of streams sharing a `requestid`: `streamtype:
 * error` then `streamtype: data`, both with `port`. Once both exist the kubelet dials the pod's
 * port and copies bytes both ways; failures are written as text on the error stream, which is
 * always finished when the forwarding ends (kubectl waits for that).
 *
 * Where the connection comes from: upstream's runtime enters the pod's network namespace and
 * dials localhost:<port> (CRI PortForward), so a process bound to 127.0.0.1 inside the pod is
 * reachable. mk8s dials <podIP>:<port> from the kubelet's (the node's) network namespace, across
 * the pod bridge: same result for anything listening on 0.0.0.0 or the pod IP, but an app bound
 * only to 127.0.0.1 in the pod refuses the connection.
 */
import { connect, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, createWebSocketStream, type RawData, type WebSocket } from 'ws';
import type { Pod } from '@mk8s/api';
import { SpdySession, realClock, type Clock, type Logger, type SpdyStream } from '@mk8s/component-base';

/** The only port-forward protocol version there is (apimachinery portforward.PortForwardProtocolV1Name). */
export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';
/** The WebSocket subprotocol kubectl ≥1.30 offers for the SPDY tunnel. */
export const PORT_FORWARD_WEBSOCKET_PROTOCOL = `SPDY/3.1+${PORT_FORWARD_PROTOCOL}`;
/** The WebSocket channel subprotocols of client libraries' port-forward (binary, and base64 text frames). */
export const PORT_FORWARD_V4_PROTOCOLS = ['v4.channel.k8s.io', 'v4.base64.channel.k8s.io'] as const;
/** How long the second stream of a pair may lag the first (kubelet --streaming-connection... default). */
export const STREAM_CREATION_TIMEOUT_MS = 30_000;

export interface PortForwardOptions {
  logger: Logger;
  /** The pod with that namespace/name bound to this node, or undefined. */
  findPod: (namespace: string, name: string) => Pod | undefined;
  /**
   * Opens a connection to the pod's port; may throw, or emit 'error' (e.g. ECONNREFUSED), both
   * reported on the error stream. @default net.connect to status.podIP
   */
  dial?: (pod: Pod, port: number) => Duplex;
  /** @default realClock */
  clock?: Clock;
  /** @default STREAM_CREATION_TIMEOUT_MS */
  streamCreationTimeoutMs?: number;
}

export interface PortForwardHandler {
  /**
   * Serves one HTTP upgrade whose path is /portForward/... (the caller routed it here). Answers
   * refusals with a Status and closes the socket; never throws.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends every open session (kubelet shutdown). */
  close(): void;
}

class RefusedError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string) { super(message); }
}

const defaultDial = (pod: Pod, port: number): Socket => {
  const ip = pod.status?.podIP;
  if (!ip) throw new Error(`pod ${pod.metadata?.namespace}/${pod.metadata?.name} has no IP address yet`);
  const conn: Socket = connect({ host: ip, port });
  // Interactive protocols through the tunnel should not wait for Nagle.
  conn.setNoDelay(true);
  return conn;
};

export function createPortForwardHandler(o: PortForwardOptions): PortForwardHandler {
  const dial = o.dial ?? defaultDial;
  const timeoutMs = o.streamCreationTimeoutMs ?? STREAM_CREATION_TIMEOUT_MS;
  const clock = o.clock ?? realClock;
  const sessions = new Set<SpdySession>();
  // `ws` validates subprotocols as RFC 7230 tokens, and '/' is not a token character, so it
  // would refuse `SPDY/3.1+portforward.k8s.io` with a 400. Negotiate here instead: the request
  // header is checked and removed before the handshake and the answer added to the 101.
  const wss = new WebSocketServer({ noServer: true });
  const tunnelled = new WeakSet<IncomingMessage>();
  wss.on('headers', (headers: string[], req: IncomingMessage) => {
    if (tunnelled.has(req)) headers.push(`Sec-WebSocket-Protocol: ${PORT_FORWARD_WEBSOCKET_PROTOCOL}`);
  });

  // The channel protocol negotiates with ws's own subprotocol handling (its names are tokens).
  const channels = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => PORT_FORWARD_V4_PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });

  /** Serves one v4 channel connection: a connection to the pod per requested port (upstream websocketStreamHandler). */
  const serveChannels = (pod: Pod, ws: WebSocket, ports: number[]) => {
    const base64 = ws.protocol === 'v4.base64.channel.k8s.io';
    const send = (ch: number, data: Buffer) => {
      if (ws.readyState !== ws.OPEN) return;
      if (base64) ws.send(String.fromCharCode(0x30 + ch) + data.toString('base64'));
      else ws.send(Buffer.concat([Buffer.from([ch]), data]));
    };
    const conns: (Duplex | undefined)[] = [];
    let open = ports.length;
    const done = () => { if (--open === 0) ws.close(1000); };
    ports.forEach((port, i) => {
      const head = Buffer.alloc(2);
      head.writeUInt16LE(port);
      send(2 * i, head);
      send(2 * i + 1, head);
      const prefix = `error forwarding port ${port} to pod ${podKey(pod)}, uid ${pod.metadata?.uid ?? ''}`;
      let conn: Duplex;
      try { conn = dial(pod, port); } catch (err) { send(2 * i + 1, Buffer.from(`${prefix}: ${(err as Error).message}`)); done(); return; }
      conns[i] = conn;
      let ended = false;
      const finish = () => { if (!ended) { ended = true; done(); } };
      conn.on('data', (b: Buffer) => send(2 * i, b));
      conn.on('error', (err: Error) => {
        o.logger.debug({ err, pod: podKey(pod), port }, 'Port-forward connection failed');
        send(2 * i + 1, Buffer.from(`${prefix}: ${err.message}`));
        finish();
      });
      conn.on('close', finish);
      conn.on('end', () => conn.end());
    });
    ws.on('message', (raw: RawData, isBinary: boolean) => {
      let b = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw as ArrayBuffer);
      let ch: number;
      if (base64 && !isBinary) {
        const text = b.toString('utf8');
        ch = text.charCodeAt(0) - 0x30;
        b = Buffer.from(text.slice(1), 'base64');
      } else {
        if (b.length === 0) return;
        ch = b[0]!;
        b = b.subarray(1);
      }
      // Only data channels take input; a write to an error channel is ignored (upstream: WriteChannel).
      if (ch % 2 !== 0 || b.length === 0) return;
      conns[ch / 2]?.write(b);
    });
    ws.on('close', () => { for (const c of conns) c?.destroy(); });
    ws.on('error', () => { for (const c of conns) c?.destroy(); });
  };

  const refuse = (socket: Duplex, e: RefusedError) => {
    const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: e.message, reason: e.reason, code: e.code });
    socket.end(`HTTP/1.1 ${e.code} ${e.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  };

  const startSession = (pod: Pod, transport: Duplex) => {
    const pairing = pairStreams(pod);
    const session = new SpdySession({ transport, onStream: pairing.onStream });
    sessions.add(session);
    session.on('protocolError', (err: Error) => o.logger.warn({ err, pod: podKey(pod) }, 'Port-forward session failed'));
    session.on('close', () => { sessions.delete(session); pairing.cancel(); });
  };

  // Pairs each request's error and data streams, then forwards (upstream httpStreamHandler.run).
  const pairStreams = (pod: Pod) => {
    const pairs = new Map<string, { error?: SpdyStream; data?: SpdyStream; cancelTimer: () => void }>();
    const onStream = (s: SpdyStream) => {
      const type = s.headers['streamtype'];
      // Clients that predate requestid pair error stream N with data stream N+2.
      const requestId = s.headers['requestid'] ?? String(type === 'data' ? s.id - 2 : s.id);
      if (type !== 'error' && type !== 'data') { s.reset(); o.logger.debug({ pod: podKey(pod), type }, 'Refused port-forward stream of unknown type'); return; }
      let p = pairs.get(requestId);
      if (!p) {
        const cancelTimer = clock.setTimeout(() => {
          pairs.delete(requestId);
          failPair(p!, `(conn=${podKey(pod)}, request=${requestId}) timed out waiting for streams`);
        }, timeoutMs);
        p = { cancelTimer };
        pairs.set(requestId, p);
      }
      if (p[type]) { s.reset(); failPair(p, `error processing stream for request ${requestId}: ${type} stream already assigned`); return; }
      p[type] = s;
      if (type === 'error') s.resume(); // the client only ever half-closes it
      if (p.error && p.data) {
        p.cancelTimer();
        pairs.delete(requestId);
        forward(pod, p.error, p.data);
      }
    };
    return { onStream, cancel: () => { for (const p of pairs.values()) p.cancelTimer(); pairs.clear(); } };
  };

  const failPair = (p: { error?: SpdyStream; data?: SpdyStream }, msg: string) => {
    o.logger.debug({ msg }, 'Port-forward stream pair failed');
    p.error?.end(msg);
    p.data?.end();
  };

  const forward = (pod: Pod, errorStream: SpdyStream, data: SpdyStream) => {
    const portHeader = data.headers['port'] ?? '';
    const port = Number(portHeader);
    const fail = (msg: string) => { errorStream.end(msg); data.end(); data.resume(); };
    if (!/^\d+$/.test(portHeader) || port < 1 || port > 65535) { fail(`invalid port ${JSON.stringify(portHeader)}`); return; }
    const prefix = `error forwarding port ${port} to pod ${podKey(pod)}, uid ${pod.metadata?.uid ?? ''}`;
    let conn: Duplex;
    try { conn = dial(pod, port); } catch (err) { fail(`${prefix}: ${(err as Error).message}`); return; }
    let failed = false;
    conn.on('error', (err: Error) => {
      if (failed) return;
      failed = true;
      // An error before any byte flowed is the interesting one (connection refused); later ones
      // are resets the client will notice as a closed connection anyway.
      o.logger.debug({ err, pod: podKey(pod), port }, 'Port-forward connection failed');
      fail(`${prefix}: ${err.message}`);
    });
    conn.on('close', () => { if (!failed) errorStream.end(); if (!data.writableEnded) data.end(); });
    data.on('close', () => { if (data.aborted) conn.destroy(); });
    data.pipe(conn);
    conn.pipe(data);
  };

  return {
    handleUpgrade(req, socket, head) {
      try {
        const url = new URL(req.url ?? '/', 'http://kubelet');
        const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
        if (parts[0] !== 'portForward' || parts.length < 3 || parts.length > 4) throw new RefusedError(404, 'NotFound', 'not found');
        const [, ns, name, uid] = parts as [string, string, string, string | undefined];
        const pod = o.findPod(ns, name);
        if (!pod || (uid && pod.metadata?.uid !== uid)) throw new RefusedError(404, 'NotFound', `pods "${name}" not found`);
        const upgrade = String(req.headers['upgrade'] ?? '').toLowerCase();
        if (upgrade === 'websocket') {
          const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '');
          if (!offered.includes(PORT_FORWARD_WEBSOCKET_PROTOCOL) && (offered.length === 0 || offered.some((p) => (PORT_FORWARD_V4_PROTOCOLS as readonly string[]).includes(p)))) {
            const ports = parsePorts(url.searchParams);
            channels.handleUpgrade(req, socket, head, (ws) => serveChannels(pod, ws, ports));
            return;
          }
          if (!offered.includes(PORT_FORWARD_WEBSOCKET_PROTOCOL)) {
            // kubectl treats any non-101 as "fall back to SPDY".
            throw new RefusedError(400, 'BadRequest', `unable to upgrade: missing subprotocol ${PORT_FORWARD_WEBSOCKET_PROTOCOL} or ${PORT_FORWARD_V4_PROTOCOLS.join(', ')}`);
          }
          delete req.headers['sec-websocket-protocol'];
          tunnelled.add(req);
          wss.handleUpgrade(req, socket, head, (ws) => {
            // Large writes would otherwise be buffered whole inside ws; the stream wrapper honours backpressure.
            startSession(pod, createWebSocketStream(ws));
          });
          return;
        }
        if (upgrade !== 'spdy/3.1') throw new RefusedError(400, 'BadRequest', `unable to upgrade: unsupported protocol ${JSON.stringify(req.headers['upgrade'] ?? '')}`);
        const offered = String(req.headers['x-stream-protocol-version'] ?? '').split(',').map((s) => s.trim());
        if (offered.length && offered[0] !== '' && !offered.includes(PORT_FORWARD_PROTOCOL)) {
          throw new RefusedError(403, 'Forbidden', `unable to upgrade: unable to negotiate protocol: client supports ${JSON.stringify(offered)}, server accepts ["${PORT_FORWARD_PROTOCOL}"]`);
        }
        socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${PORT_FORWARD_PROTOCOL}\r\n\r\n`);
        if (head.length) socket.unshift(head);
        startSession(pod, socket);
      } catch (err) {
        refuse(socket, err instanceof RefusedError ? err : new RefusedError(500, 'InternalError', (err as Error).message));
      }
    },
    close() {
      for (const s of sessions) s.close();
      for (const c of wss.clients) c.terminate();
      for (const c of channels.clients) c.terminate();
    },
  };
}

const podKey = (pod: Pod) => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

/**
 * The ports of a channel-protocol request: `port` (what the apiserver sends the kubelet) or
 * `ports` (what clients send the apiserver), repeated and/or comma-separated (upstream
 * portforward.NewV4Options). Throws a 400 refusal for a missing, empty or invalid one.
 */
export function parsePorts(q: URLSearchParams): number[] {
  const values = [...q.getAll('port'), ...q.getAll('ports')];
  if (values.length === 0) throw new RefusedError(400, 'BadRequest', 'query parameter "port" is required');
  const out: number[] = [];
  for (const v of values) {
    if (v === '') throw new RefusedError(400, 'BadRequest', 'query parameter "port" cannot be empty');
    for (const p of v.split(',')) {
      const n = /^\d+$/.test(p) ? Number(p) : NaN;
      if (!Number.isInteger(n) || n > 65535) throw new RefusedError(400, 'BadRequest', `unable to parse "${p}" as a port: strconv.ParseUint: parsing ${JSON.stringify(p)}: invalid syntax`);
      if (n < 1) throw new RefusedError(400, 'BadRequest', `port "${v}" must be > 0`);
      out.push(n);
    }
  }
  return out;
}
