/**
 * exec/attach over WebSockets with the Kubernetes channel protocol (client-go
 * tools/remotecommand, v5.channel.k8s.io falling back to v4): every binary frame starts with a
 * channel byte (0 stdin, 1 stdout, 2 stderr, 3 error Status, 4 resize; v5: 255 close).
 */
import WebSocket from 'ws';
import type { ApiStatus } from '@mk8s/api';
import type { RestClientset } from './rest-clientset.js';

export const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;
export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

/** Options for {@link execInPod}. */
export interface ExecOptions {
  namespace: string;
  /** Pod name. */
  name: string;
  container?: string;
  command: string[];
  /** Sent to the process, then stdin is closed (v5). Omit for no stdin. */
  stdin?: string | Uint8Array | AsyncIterable<string | Uint8Array>;
  tty?: boolean;
  /** Streams output as it arrives; when absent it is collected into the result. */
  onStdout?(chunk: Buffer): void;
  onStderr?(chunk: Buffer): void;
  signal?: AbortSignal;
  /** 'exec' (default) or 'attach' (command ignored). */
  subresource?: 'exec' | 'attach';
}

export interface ExecResult {
  /** Collected stdout (empty when onStdout was given). */
  stdout: string;
  stderr: string;
  /** The Status from the error channel (Success when the command exited 0). */
  status: ApiStatus;
  /** The command's exit code: 0, the code from a NonZeroExitCode status, or -1 for other failures. */
  exitCode: number;
}

/** Opens a WebSocket to an apiserver path with the clientset's TLS settings and credentials. */
export function connectWebSocket(client: RestClientset, path: string, query: URLSearchParams, protocols: readonly string[]): WebSocket {
  const base = new URL(client.config.server);
  base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = `${base.origin}${path}?${query.toString()}`;
  const c = client.config;
  return new WebSocket(url, [...protocols], {
    headers: client.authHeaders(),
    ...(c.ca ? { ca: c.ca } : {}),
    ...(c.cert ? { cert: c.cert } : {}),
    ...(c.key ? { key: c.key } : {}),
    ...(c.tlsServerName ? { servername: c.tlsServerName } : {}),
    rejectUnauthorized: !c.insecureSkipTlsVerify,
  });
}

/** Runs a command in a container (or attaches) and resolves once the server reports the outcome. */
export function execInPod(client: RestClientset, o: ExecOptions): Promise<ExecResult> {
  const sub = o.subresource ?? 'exec';
  const q = new URLSearchParams();
  if (sub === 'exec') for (const c of o.command) q.append('command', c);
  if (o.container) q.set('container', o.container);
  if (o.stdin !== undefined) q.set('stdin', 'true');
  q.set('stdout', 'true');
  // A tty merges stderr into stdout, as upstream rejects stderr with tty.
  if (!o.tty) q.set('stderr', 'true');
  if (o.tty) q.set('tty', 'true');
  const path = `/api/v1/namespaces/${encodeURIComponent(o.namespace)}/pods/${encodeURIComponent(o.name)}/${sub}`;
  const ws = connectWebSocket(client, path, q, EXEC_PROTOCOLS);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let status: ApiStatus | undefined;

  return new Promise<ExecResult>((resolve, reject) => {
    const onAbort = () => { ws.terminate(); reject(o.signal?.reason ?? new Error('aborted')); };
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => reject(new Error(`exec upgrade failed: HTTP ${res.statusCode ?? 0} ${body.slice(0, 300)}`)));
    });
    ws.on('error', (e) => reject(e));
    ws.on('open', () => {
      if (o.stdin === undefined) return;
      void sendStdin(ws, o.stdin).catch((e: unknown) => reject(e));
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const buf = isBinary ? data : Buffer.from(data.toString(), 'utf8');
      if (buf.length === 0) return;
      const ch = buf[0];
      const payload = buf.subarray(1);
      if (ch === CHANNEL.stdout) { if (o.onStdout) o.onStdout(payload); else out.push(payload); }
      else if (ch === CHANNEL.stderr) { if (o.onStderr) o.onStderr(payload); else err.push(payload); }
      else if (ch === CHANNEL.error && payload.length) {
        try { status = JSON.parse(payload.toString('utf8')) as ApiStatus; } catch { status = { status: 'Failure', message: payload.toString('utf8') } as ApiStatus; }
      }
    });
    ws.on('close', () => {
      o.signal?.removeEventListener('abort', onAbort);
      const st: ApiStatus = status ?? ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' } as ApiStatus);
      resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), status: st, exitCode: exitCodeOf(st) });
    });
  });
}

async function sendStdin(ws: WebSocket, stdin: NonNullable<ExecOptions['stdin']>): Promise<void> {
  const send = (chunk: string | Uint8Array) => new Promise<void>((res, rej) =>
    ws.send(Buffer.concat([Buffer.from([CHANNEL.stdin]), typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk)]), (e) => (e ? rej(e) : res())));
  if (typeof stdin === 'string' || stdin instanceof Uint8Array) await send(stdin);
  else for await (const chunk of stdin) await send(chunk);
  // Only v5 can say "stdin is done"; v4 peers see EOF when the connection closes.
  if (ws.protocol === 'v5.channel.k8s.io') ws.send(Buffer.from([CHANNEL.close, CHANNEL.stdin]));
}

/** Exit code from an exec Status (upstream: reason NonZeroExitCode, cause ExitCode). */
export function exitCodeOf(st: ApiStatus): number {
  if (st.status === 'Success') return 0;
  const cause = st.details?.causes?.find((c) => c.reason === 'ExitCode');
  const n = Number(cause?.message);
  return st.reason === 'NonZeroExitCode' && Number.isFinite(n) ? n : -1;
}
