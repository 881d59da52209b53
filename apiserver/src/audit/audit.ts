/**
 * Audit events (audit.k8s.io/v1 Event; upstream apiserver/pkg/endpoints/filters/audit.go): one
 * event per stage a request reaches, at the level the policy gives it. Stages: RequestReceived
 * (once authenticated, before impersonation and authorization, as upstream), ResponseStarted (long-
 * running requests: watches, once their headers are out), ResponseComplete (the response ended),
 * Panic (the handler failed with an unexpected error: our analogue of a Go panic). Metadata carries
 * user, impersonatedUser, verb, objectRef, sourceIPs, userAgent, responseStatus and the
 * authorization annotations; Request adds requestObject; RequestResponse adds responseObject. Each
 * request's auditID (the client's `Audit-ID` header, else a fresh UUID) is answered as `Audit-Id`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '@mk8s/component-base';
import type { UserInfo } from '../auth/authentication.js';
import type { RequestInfo } from '../endpoints/request-info.js';
import { MAX_NESTING_DEPTH, withinDepth } from '../endpoints/body.js';
import type { AuditBackend } from './log-backend.js';
import { evaluatePolicy, type AuditLevel, type AuditPolicy, type AuditStage } from './policy.js';

export interface AuditEvent {
  kind: 'Event';
  apiVersion: 'audit.k8s.io/v1';
  level: AuditLevel;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  user: UserInfoJson;
  impersonatedUser?: UserInfoJson;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string; apiVersion?: string; subresource?: string };
  responseStatus?: { metadata: Record<string, never>; code: number; status?: string; message?: string; reason?: string };
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}
type UserInfoJson = { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };

/** One request's audit state (req.audit). */
export interface AuditContext {
  event: AuditEvent;
  omit: readonly AuditStage[];
  /** The response body as sent (JSON text), when not streamed (server.ts' onSend). */
  responseBody?: string;
  /** The request body as received (Request and RequestResponse). */
  requestBody?: Buffer;
  panicked: boolean;
  done: boolean;
}

export interface AuditorOptions { policy: AuditPolicy; backend: AuditBackend; clock: Clock }

const LONG_RUNNING = new Set(['watch']);

/** RFC 3339 with microseconds, as upstream's MicroTime. */
const micro = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

const userJson = (u: UserInfo): UserInfoJson => ({
  username: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: [...u.groups], ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}),
});

export class Auditor {
  constructor(private readonly o: AuditorOptions) {}

  /**
   * Starts the audit of a request once its caller is known (undefined: authentication failed) and
   * emits RequestReceived. Returns undefined at level None. Completes by itself when res closes.
   */
  begin(req: IncomingMessage, res: ServerResponse | undefined, info: RequestInfo, user: UserInfo | undefined, auditID: string, receivedMs: number): AuditContext | undefined {
    const attrs = info.resourceRequest
      ? { user, verb: info.verb, resourceRequest: true, apiGroup: info.group, resource: info.resource, subresource: info.subresource, namespace: info.namespace, name: info.name }
      : { user, verb: info.verb, resourceRequest: false, path: info.path };
    const { level, omitStages } = evaluatePolicy(this.o.policy, attrs);
    if (level === 'None') return undefined;
    const xff = req.headers['x-forwarded-for'];
    const forwarded = typeof xff === 'string' ? xff.split(',').map((s) => s.trim()).filter(Boolean) : [];
    const remote = req.socket?.remoteAddress;
    const event: AuditEvent = {
      kind: 'Event', apiVersion: 'audit.k8s.io/v1', level, auditID, stage: 'RequestReceived',
      requestURI: req.url ?? '', verb: info.verb, user: user ? userJson(user) : {},
      sourceIPs: [...forwarded, ...(remote && !forwarded.includes(remote) ? [remote] : [])],
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
      ...(info.resourceRequest ? { objectRef: objectRef(info) } : {}),
      requestReceivedTimestamp: micro(receivedMs), stageTimestamp: micro(receivedMs),
    };
    const ctx: AuditContext = { event, omit: omitStages, panicked: false, done: false };
    this.emit(ctx, 'RequestReceived');
    if (!res) return ctx;                                                  // upgrades: the caller calls finish()
    if (LONG_RUNNING.has(info.verb)) {
      // Watches answer with writeHead on the raw response (hijacked): ResponseStarted then.
      const writeHead = res.writeHead;
      res.writeHead = ((...args: Parameters<typeof writeHead>) => {
        res.writeHead = writeHead;
        const out = writeHead.apply(res, args);
        this.emit(ctx, 'ResponseStarted');
        return out;
      }) as typeof writeHead;
    }
    const done = () => this.complete(ctx, res.statusCode);
    res.once('finish', done);
    res.once('close', done);
    return ctx;
  }

  /** The identity the request runs as, when it impersonates. */
  impersonated(ctx: AuditContext | undefined, user: UserInfo): void { if (ctx) ctx.event.impersonatedUser = userJson(user); }

  /** Authorization's decision (upstream's authorization.k8s.io/decision and /reason annotations). */
  decision(ctx: AuditContext | undefined, allowed: boolean, reason: string): void {
    if (!ctx) return;
    ctx.event.annotations = { ...ctx.event.annotations, 'authorization.k8s.io/decision': allowed ? 'allow' : 'forbid', ...(reason ? { 'authorization.k8s.io/reason': reason } : {}) };
  }

  /** Ends an upgrade's audit (exec/attach/port-forward): 101 once proxied, else the refusal's code. */
  finish(ctx: AuditContext | undefined, code: number): void { if (ctx) this.complete(ctx, code); }

  private complete(ctx: AuditContext, code: number): void {
    if (ctx.done) return;
    ctx.done = true;
    const ev = ctx.event;
    ev.responseStatus = { metadata: {}, code };
    const body = ctx.responseBody;
    // As upstream's LogRequestObject at every level: a create names its object in objectRef (from the
    // JSON request body, else the created object answered: protobuf bodies are not decoded here).
    const ref = ev.objectRef;
    if (ref && !ref.name && ev.verb === 'create') {
      const fromReq = ctx.requestBody?.length ? safeJson(ctx.requestBody.toString('utf8')) : undefined;
      const obj = (fromReq ?? (body !== undefined && code < 300 ? safeJson(body) : undefined)) as { metadata?: { name?: string; namespace?: string } } | undefined;
      if (obj?.metadata?.name && !ref.subresource) ref.name = obj.metadata.name;
    }
    if (body !== undefined && code >= 400) {
      const s = safeJson(body) as { kind?: string; status?: string; message?: string; reason?: string } | undefined;
      if (s?.kind === 'Status') Object.assign(ev.responseStatus, { ...(s.status ? { status: s.status } : {}), ...(s.message ? { message: s.message } : {}), ...(s.reason ? { reason: s.reason } : {}) });
    }
    if (ev.level === 'Request' || ev.level === 'RequestResponse') {
      const raw = ctx.requestBody;
      // As upstream, only an object the handler could decode is logged: a body refused for its
      // nesting (hostile input) would overflow JSON.stringify's stack below.
      const obj = raw && raw.length ? decodableJson(raw.toString('utf8')) : undefined;
      if (obj !== undefined) ev.requestObject = obj;
    }
    if (ev.level === 'RequestResponse' && body !== undefined && code < 400) {
      const obj = safeJson(body);
      if (obj !== undefined) ev.responseObject = obj;
    }
    this.emit(ctx, ctx.panicked ? 'Panic' : 'ResponseComplete');
  }

  private emit(ctx: AuditContext, stage: AuditStage): void {
    if (ctx.omit.includes(stage)) return;
    const ev = ctx.event;
    ev.stage = stage;
    ev.stageTimestamp = micro(this.o.clock.now());
    // Only ResponseComplete/Panic carry the bodies; the line is written now, so later changes do not show.
    let line: string;
    try {
      line = JSON.stringify(ev);
    } catch (err) {
      // Auditing never takes the apiserver down: the event is written without the bodies.
      const { requestObject: _q, responseObject: _r, ...rest } = ev;
      line = JSON.stringify({ ...rest, annotations: { ...rest.annotations, 'audit.mk8s.io/bodies-omitted': (err as Error).message } });
    }
    this.o.backend.write(line);
  }
}

function objectRef(info: Extract<RequestInfo, { resourceRequest: true }>): NonNullable<AuditEvent['objectRef']> {
  return {
    resource: info.resource,
    ...(info.namespace ? { namespace: info.namespace } : {}),
    ...(info.name ? { name: info.name } : {}),
    ...(info.group ? { apiGroup: info.group } : {}),
    apiVersion: info.version,
    ...(info.subresource ? { subresource: info.subresource } : {}),
  };
}

/** safeJson, refusing what the handlers refuse: nesting deeper than MAX_NESTING_DEPTH. */
function decodableJson(text: string): unknown {
  const v = safeJson(text);
  return v !== null && typeof v === 'object' && !withinDepth(v, MAX_NESTING_DEPTH) ? undefined : v;
}

function safeJson(text: string): unknown {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return undefined;
  try { return JSON.parse(text); } catch { return undefined; }
}
