/**
 * buildApiServer: the apiserver's HTTP core as a fastify instance (testable with inject).
 * Every request goes through the named stages authentication → authorization → (handler:
 * decoding → admission (mutating) → strategy + validation → admission (validating) → storage).
 */
import { ApiError, applyDefaults, applyDefaultsInPlace, LimitRanges, Services, Namespaces, ResourceQuotas, Nodes, Pods, PriorityClasses, RESOURCES, Secrets, ServiceAccounts, StorageClasses, registryPrefix, validateObject, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import { realClock, type Clock, type Logger } from '@mk8s/component-base';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { setMaxListeners } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Storage } from './storage/interfaces.js';
import { proxyUpgrade, writeStatus, type KubeletClientConfig } from './endpoints/kubelet-proxy.js';
import { AnonymousAuthenticator, authenticate, type Authenticator, type UserInfo } from './auth/authentication.js';
import { AlwaysAllowAuthorizer, authorize, type Authorizer } from './auth/authorization.js';
import { impersonate } from './auth/impersonation.js';
import type { AuditContext, Auditor } from './audit/audit.js';
import type { AdmissionPlugin } from './admission/interfaces.js';
import { forbidden, NamespaceLifecycle } from './admission/plugins/namespace-lifecycle.js';
import { DefaultPodFields } from './admission/plugins/pod-defaults.js';
import { Priority, SYSTEM_PRIORITY_CLASSES } from './admission/plugins/priority.js';
import { ServiceAccountAdmission } from './admission/plugins/service-account.js';
import { PodSecurity } from './admission/plugins/pod-security.js';
import { LimitRanger } from './admission/plugins/limit-ranger.js';
import { ResourceQuotaAdmission } from './admission/plugins/resource-quota.js';
import { parseAdmissionPlugins } from './admission/plugins/enabled.js';
import { DefaultStorageClass, PersistentVolumeClaimResize, StorageObjectInUseProtection, type StorageClassLister } from './admission/plugins/storage.js';
import { loadAdmissionConfig } from './admission/plugins/admission-config.js';
import { CrdController, CustomResourceDefinitions } from './apiextensions/index.js';
import { Aggregator, APIServices, proxyToBackend } from './apiregistration/index.js';
import { MutatingWebhookConfigurations, ValidatingWebhookConfigurations, mutatingWebhookAdmission, validatingWebhookAdmission, type WebhookAdmissionOptions, type WebhookConfiguration } from './admissionregistration/index.js';
import { certificatesAdmission } from './admission/plugins/certificates.js';
import { createRegistry, type Registry, type RequestContext, type ResourceEntry } from './registry/index.js';
import type { ServiceAccountTokenIssuer } from './auth/service-account.js';
import { DEFAULT_SA_ISSUER } from './auth/service-account.js';
import type { TokenRequestDeps } from './registry/core/serviceaccounts/token.js';
import { parseRequestInfo, type RequestInfo } from './endpoints/request-info.js';
import { MAX_REQUEST_BODY_BYTES, methodNotAllowedError, notFoundError, sendError, toApiError } from './endpoints/status.js';
import { handleResourceRequest, type TableConvertor, type UnknownFieldsCheck } from './endpoints/handlers.js';
import { ApiServerMetrics, isLongRunning, RequestLabelCache, type RequestMetricLabels } from './metrics.js';
import { registerDiscovery, resolveSubresource } from './discovery/index.js';
import { toTable, wantsTable } from './printers/index.js';
import { knownFieldsValidator, registerOpenApi } from './openapi/index.js';

/** Namespaces the apiserver makes sure exist (upstream's system namespaces controller). */

/**
 * Upstream's BasicLongRunningRequestCheck(verbs watch, proxy; subresources attach, exec, proxy,
 * log, portforward): such requests last as long as their stream and are not held to max-in-flight.
 */
export function isLongRunningRequest(info: { verb: string; subresource: string }): boolean {
  return info.verb === 'watch' || info.verb === 'proxy' || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

export const SYSTEM_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export interface ApiServerOptions {
  storage: Storage;
  logger: Logger;
  /** @default realClock */
  clock?: Clock;
  /** @default [AnonymousAuthenticator] */
  authenticators?: Authenticator[];
  /** @default [AlwaysAllowAuthorizer] */
  authorizers?: Authorizer[];
  /** Plugins run after the built-in NamespaceLifecycle. */
  admission?: AdmissionPlugin[];
  metrics?: ApiServerMetrics;
  /** Create the system namespaces when the server becomes ready. @default true */
  bootstrapNamespaces?: boolean;
  /** Watches without timeoutSeconds end after this. @default 1800 */
  watchTimeoutSeconds?: number;
  /** Unknown-field detection for fieldValidation (Strict/Warn). @default the OpenAPI schemas; false = none */
  unknownFields?: UnknownFieldsCheck | false;
  /** Server-side Table printing. @default the printers package */
  table?: TableConvertor | false;
  /** Service ClusterIP range. @default '10.96.0.0/12' */
  serviceClusterIPRange?: string;
  /** Service node port range. @default { base: 30000, size: 2768 } (30000-32767) */
  serviceNodePortRange?: { base: number; size: number };
  /**
   * Concurrent non-watch requests allowed (upstream --max-requests-inflight /
   * --max-mutating-requests-inflight); more answer 429 with Retry-After. @default { readonly: 400, mutating: 200 }
   */
  maxRequestsInflight?: { readonly: number; mutating: number };
  /** How pods/log, exec and attach reach kubelets (TLS and the apiserver's client identity). @default plain HTTP */
  kubeletClient?: KubeletClientConfig;
  /**
   * Optional admission plugins by name (--enable-admission-plugins; admission/plugins/enabled.ts).
   * ServiceAccount and PodSecurity run only when listed. @default none of the optional ones
   */
  enableAdmissionPlugins?: readonly string[];
  /** AdmissionConfiguration file (--admission-control-config-file): PodSecurity defaults and exemptions. @default none */
  admissionControlConfigFile?: string;
  /** Signs serviceaccounts/<name>/token (TokenRequest); without it that subresource answers 404. */
  serviceAccountTokenIssuer?: ServiceAccountTokenIssuer;
  /** Audit logging (--audit-policy-file, --audit-log-path): every request's events at its policy level. @default none */
  audit?: Auditor;
  /**
   * Named checks of /healthz, /livez and /readyz besides etcd (each also at /healthz/<name>; upstream
   * healthz.HealthChecker, e.g. kms-providers). A throw fails the check.
   */
  healthChecks?: { name: string; check: () => void | Promise<void> }[];
  /**
   * The client certificate the aggregator presents to APIService backends (--proxy-client-cert-file,
   * --proxy-client-key-file; PEM). @default none: backends see no client certificate
   */
  proxyClient?: { cert: string; key: string };
  /** Extra registration (discovery, OpenAPI, proxies) run before the resource routes. */
  plugins?: ((app: FastifyInstance) => void | Promise<void>)[];
}

declare module 'fastify' {
  interface FastifyRequest {
    requestInfo: RequestInfo;
    /** Who the request runs as (the impersonated identity when it impersonates). */
    user: UserInfo;
    /** Who authenticated, when that differs from user (impersonation): audit's `user`. */
    impersonator: UserInfo | undefined;
    /** This request's audit event, when the policy audits it. */
    audit: AuditContext | undefined;
    /** performance.now() when the request arrived (request duration metric). */
    startMs: number;
    /** Which max-in-flight budget the request holds until it ends. */
    inflightKind: 'readonly' | 'mutating' | undefined;
    /** 299 warnings for the response (the RequestContext's). */
    warnings: string[] | undefined;
  }
}

/** The resources the registry serves (the scheme's RESOURCES). */
export const SERVED_RESOURCES: readonly ResourceDescriptor[] = RESOURCES;

/**
 * Builds the apiserver. Call `ready()` (or `inject`/`listen`, which call it) before use; close()
 * ends all watches and closes the fastify instance (not the storage: the caller owns it).
 */
export async function buildApiServer(o: ApiServerOptions): Promise<FastifyInstance & { registry: Registry; metrics: ApiServerMetrics }> {
  const clock = o.clock ?? realClock;
  const metrics = o.metrics ?? new ApiServerMetrics();
  const closing = new AbortController();
  // Every open watch listens here until it ends and removes its listener: hundreds at once is
  // normal, not Node's "possible leak" past 10.
  setMaxListeners(0, closing.signal);
  const authenticators = o.authenticators ?? [new AnonymousAuthenticator()];
  const authorizers = o.authorizers ?? [new AlwaysAllowAuthorizer()];
  const auditor = o.audit;
  let registry: Registry | undefined;
  // Namespaces deleted through this apiserver are read live for a while (upstream's forceLiveLookupCache, 30 s):
  // the watch cache may not have seen them turn Terminating yet.
  const recentlyDeleted = new Map<string, number>();
  const trackNamespaceDeletes: AdmissionPlugin = {
    name: 'NamespaceForceLiveLookup',
    handles: (op) => op === 'DELETE',
    validate: async (a) => {
      if (a.resource.resource === 'namespaces' && a.resource.group === '' && !a.dryRun) recentlyDeleted.set(a.name, clock.now());
    },
  };
  const lifecycle = new NamespaceLifecycle(async (name) => {
    const namespaces = registry!.get(Namespaces)!;
    const deletedAt = recentlyDeleted.get(name);
    if (deletedAt !== undefined && clock.now() - deletedAt > 30_000) recentlyDeleted.delete(name);
    if (!recentlyDeleted.has(name)) {
      // Like upstream's informer-backed plugin: the watch cache first, so a create costs no extra
      // etcd round trip; a live read only for a namespace the cache does not know (yet).
      try {
        return await namespaces.get('', name, { resourceVersion: '0' });
      } catch (err) {
        if (toApiError(err).reason !== 'NotFound') throw err;
      }
    }
    try {
      return await namespaces.get('', name);
    } catch (err) {
      if (toApiError(err).reason === 'NotFound') return undefined;
      throw err;
    }
  });
  const priorityClasses = () => registry!.get(PriorityClasses)!;
  const priority = new Priority({
    get: async (name) => {
      try { return await priorityClasses().get('', name); } catch (err) { if (toApiError(err).reason === 'NotFound') return undefined; throw err; }
    },
    list: async () => (await priorityClasses().list('', { resourceVersion: '0' })).items,
  });
  // The storage plugins upstream enables by default (admission/plugins/storage.ts).
  const storageClasses: StorageClassLister = {
    get: async (name) => {
      try { return await registry!.get(StorageClasses)!.get('', name); } catch (err) { if (toApiError(err).reason === 'NotFound') return undefined; throw err; }
    },
    list: async () => (await registry!.get(StorageClasses)!.list('', { resourceVersion: '0' })).items,
  };
  const storageAdmission: AdmissionPlugin[] = [new DefaultStorageClass(storageClasses), new StorageObjectInUseProtection(), new PersistentVolumeClaimResize(storageClasses)];
  const enabled = parseAdmissionPlugins(o.enableAdmissionPlugins ?? []);
  const optional: AdmissionPlugin[] = [];
  if (enabled.includes('ServiceAccount')) {
    optional.push(new ServiceAccountAdmission({
      getServiceAccount: async (ns, name) => (await registry!.get(ServiceAccounts)!.list(ns, { resourceVersion: '0', predicate: (x) => x.metadata.name === name })).items[0],
      getServiceAccountLive: async (ns, name) => {
        try { return await registry!.get(ServiceAccounts)!.get(ns, name); } catch (err) { if (toApiError(err).reason === 'NotFound') return undefined; throw err; }
      },
      sleep: (ms) => clock.sleep(ms),
    }));
  }
  if (enabled.includes('PodSecurity')) {
    const psa = o.admissionControlConfigFile ? loadAdmissionConfig(o.admissionControlConfigFile).podSecurity : undefined;
    optional.push(new PodSecurity({
      ...(psa ? { defaults: psa.defaults, exemptions: psa.exemptions } : {}),
      getNamespace: (name) => lifecycle.getNamespace(name),
      listPods: async (ns) => (await registry!.get(Pods)!.list(ns, { resourceVersion: '0' })).items,
      audit: (e) => o.logger.info(e, 'PodSecurity audit violation'),
    }));
  }
  if (enabled.includes('LimitRanger')) {
    optional.push(new LimitRanger({ listLimitRanges: async (ns) => (await registry!.get(LimitRanges)!.list(ns, { resourceVersion: '0' })).items }));
  }
  if (enabled.includes('ResourceQuota')) {
    // Charged with the apiserver's own identity, as upstream's loopback client does.
    const self: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, warnings: [] };
    optional.push(new ResourceQuotaAdmission({
      listQuotas: async (ns, live) => (await registry!.get(ResourceQuotas)!.list(ns, live ? {} : { resourceVersion: '0' })).items,
      updateQuotaStatus: async (q) => { await registry!.get(ResourceQuotas)!.update({ ...self, warnings: [] }, q.metadata.namespace ?? '', q.metadata.name, q, 'status'); },
      now: () => clock.now(),
    }));
  }
  // Admission webhooks last, as upstream orders MutatingAdmissionWebhook and ValidatingAdmissionWebhook.
  const webhookAdmission = () => {
    const source = (r: ResourceDescriptor) => ({ list: async () => (await registry!.get(r)!.list('', { resourceVersion: '0' })).items as WebhookConfiguration[] });
    const opts: WebhookAdmissionOptions = {
      validating: source(ValidatingWebhookConfigurations), mutating: source(MutatingWebhookConfigurations),
      namespaceLabels: async (name) => (await lifecycle.getNamespace(name))?.metadata.labels ?? undefined,
      resolveService: async (ns, name, port) => {
        const svc = await registry!.get(Services)!.get(ns, name) as { spec?: { clusterIP?: string } };
        const ip = svc.spec?.clusterIP;
        if (!ip || ip === 'None') throw new Error(`service "${ns}/${name}" has no cluster IP`);
        return `${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
      },
    };
    return [mutatingWebhookAdmission(opts), validatingWebhookAdmission(opts)];
  };
  const admission = [new DefaultPodFields(), priority, lifecycle, trackNamespaceDeletes, ...storageAdmission,
    ...certificatesAdmission(authorizers), ...optional, ...(o.admission ?? []), ...webhookAdmission()];
  // Custom objects go through the same chain (NamespaceLifecycle, quota, the caller's plugins).
  const crAdmission = admission;
  registry = createRegistry({
    storage: o.storage, clock, admission,
    defaulter: (r, obj) => applyDefaults(r, obj),
    defaulterInPlace: (r, obj) => applyDefaultsInPlace(r, obj),
    validator: (r, obj, old) => validateObject(r, obj, old, o.serviceNodePortRange ? { service: { nodePortRange: o.serviceNodePortRange } } : {}),
    services: {
      ...(o.serviceClusterIPRange ? { serviceCidr: o.serviceClusterIPRange } : {}),
      ...(o.serviceNodePortRange ? { nodePortRange: o.serviceNodePortRange } : {}),
    },
  });
  const resolveResource = (group: string, version: string, resource: string) => registry!.lookup(group, version, resource)?.descriptor;
  const table: TableConvertor | undefined = o.table === false ? undefined : o.table ?? {
    wantsTable,
    toTable: (r, objects, opts) => registry!.entryOf(r)?.table?.(objects, opts) ?? toTable(r, objects, {
      ...(opts.includeObject ? { includeObject: opts.includeObject as 'None' | 'Object' | 'Metadata' } : {}),
      ...(opts.noHeaders ? { noHeaders: true } : {}),
      listMeta: { ...(opts.resourceVersion ? { resourceVersion: opts.resourceVersion } : {}), ...(opts.continue ? { continue: opts.continue } : {}) },
      now: clock.now(),
    }),
  };

  const app = Fastify({
    loggerInstance: o.logger as unknown as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request pino child (fastify's default binds a reqId per request): nothing here logs
    // through request.log, and the child was an allocation on every request.
    childLoggerFactory: (logger) => logger,
    bodyLimit: MAX_REQUEST_BODY_BYTES,
    forceCloseConnections: true,
    // A trailing slash names the same resource; object names may be long (253 characters).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    // Our own 503 below answers a Status; fastify's is a bare JSON error.
    return503OnClosing: false,
  }) as unknown as FastifyInstance;

  // One catch-all parser: the handler decodes by media type so that every failure is a Status.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_REQUEST_BODY_BYTES }, (_req, body, done) => done(null, body));

  // Every per-request field is declared up front: requests keep one shape (no property added
  // later, none deleted), which keeps fastify's and our accesses to them fast.
  app.decorateRequest('requestInfo', null as never);
  app.decorateRequest('user', null as never);
  app.decorateRequest('impersonator', undefined);
  app.decorateRequest('audit', undefined);
  app.decorateRequest('startMs', 0);
  app.decorateRequest('inflightKind', undefined);
  app.decorateRequest('warnings', undefined);

  app.setErrorHandler((err, req, reply) => {
    // An error that is not an API error is a bug: audit's Panic stage (upstream's recovered panic).
    if (req.audit && !(err instanceof ApiError)) req.audit.panicked = true;
    const apiErr = toApiError(err);
    if (apiErr.code >= 500) o.logger.error({ err }, 'Request failed');
    return sendError(reply, apiErr);
  });
  app.setNotFoundHandler((_req, reply) => sendError(reply, notFoundError()));

  // Stage 0: max-in-flight (watches are long-running and not counted, as upstream).
  const limits = o.maxRequestsInflight ?? { readonly: 400, mutating: 200 };
  const inflight = { readonly: 0, mutating: 0 };
  // apiserver_current_inflight_requests reports the high-water mark since the previous scrape, as
  // upstream's pre-aggregated gauge reports the last second's maximum.
  const inflightMax = { readonly: 0, mutating: 0 };
  const release = (req: FastifyRequest) => {
    const kind = req.inflightKind;
    if (kind) { inflight[kind]--; req.inflightKind = undefined; }
  };
  metrics.inflight = () => {
    const out = { readOnly: Math.max(inflightMax.readonly, inflight.readonly), mutating: Math.max(inflightMax.mutating, inflight.mutating) };
    inflightMax.readonly = inflight.readonly; inflightMax.mutating = inflight.mutating;
    return out;
  };
  // apiserver_storage_objects: counted at scrape time (from the watch cache when it has the resource).
  const storageCount = o.storage.count?.bind(o.storage);
  metrics.storageCounts = async () => new Map(await Promise.all(SERVED_RESOURCES.map(async (r) =>
    [r.group ? `${r.resource}.${r.group}` : r.resource, storageCount ? await storageCount(registryPrefix(r)).catch(() => -1) : -1] as const)));

  // The request metrics, in one place for every request (upstream's InstrumentRouteFunc around
  // each route): recorded when the response closes, so hijacked replies (watches, log streams)
  // count too, with the code they sent and their whole duration.
  const labelCache = new RequestLabelCache();
  const withCode = (labels: RequestMetricLabels, code: number) => labelCache.withCode(labels, code);
  const labelsFor = (info: RequestInfo, url: string, contentType: string | undefined) => labelCache.labelsFor(info, url, contentType);
  /** Counts one request; returns what to call when it ends (with the HTTP status). */
  const trackRequest = (info: RequestInfo, url: string, contentType: string | undefined, startMs: number): ((code: number) => void) | undefined => {
    const labels = labelsFor(info, url, contentType);
    if (!labels) return undefined;
    const longRunning = isLongRunning(labels);
    const lr = longRunning ? { verb: labels.verb, group: labels.group, version: labels.version, resource: labels.resource, subresource: labels.subresource, scope: labels.scope, component: labels.component } : undefined;
    if (lr) metrics.longRunning.inc(lr);
    return (code) => {
      if (lr) metrics.longRunning.dec(lr);
      metrics.requestTotal.inc(withCode(labels, code));
      metrics.requestDuration.observe(labels, (performance.now() - startMs) / 1000);
    };
  };
  // Callback-style hooks on the per-request path: no promise per hook and request.
  app.addHook('onRequestAbort', (req, done) => { release(req); done(); });

  // Stage 1 and 2: authentication, authorization.
  let shuttingDown = false;
  app.addHook('preClose', async () => { shuttingDown = true; });
  app.addHook('onRequest', async (req, reply) => {
    if (shuttingDown) return sendError(reply.header('connection', 'close'), new ApiError('ServiceUnavailable', 'apiserver is shutting down'));
    // An empty Content-Type is as good as none (client-go's scale client sends no type at all).
    if (req.headers['content-type'] !== undefined && req.headers['content-type'].trim() === '') delete req.headers['content-type'];
    req.requestInfo = parseRequestInfo(req.method, req.url, resolveResource);
    req.startMs = performance.now();
    const ended = trackRequest(req.requestInfo, req.url, req.headers['content-type'], req.startMs);
    if (ended) reply.raw.once('close', () => ended(reply.raw.statusCode));
    if (req.requestInfo.resourceRequest && !isLongRunningRequest(req.requestInfo)) {
      const kind = req.method === 'GET' || req.method === 'HEAD' ? 'readonly' : 'mutating';
      if (inflight[kind] >= limits[kind]) {
        return sendError(reply.header('retry-after', '1'), new ApiError('TooManyRequests', 'Too many requests, please try again later.', { details: { retryAfterSeconds: 1 } }));
      }
      if (++inflight[kind] > inflightMax[kind]) inflightMax[kind] = inflight[kind];
      req.inflightKind = kind;
      // The raw response closes for every request, answered, hijacked or cut off mid-body: a slot
      // released only by onResponse/onRequestAbort leaked on the rest until every request got 429.
      reply.raw.once('close', () => release(req));
    }
    let authenticated: UserInfo | undefined;
    let authErr: unknown;
    try { authenticated = await authenticate(authenticators, req.raw); } catch (err) { authErr = err; }
    if (auditor) {
      const id = auditID(req.headers['audit-id']);
      // On the raw response: hijacked replies (watches) carry it too.
      reply.raw.setHeader('audit-id', id);
      req.audit = auditor.begin(req.raw, reply.raw, req.requestInfo, authenticated, id, clock.now());
    }
    if (authErr) throw authErr;
    if (!authenticated) return sendError(reply, new ApiError('Unauthorized', 'Unauthorized'));
    // Impersonation (upstream's filter between authentication and authorization).
    const impersonated = await impersonate(req.raw, authenticated, authorizers);
    const user = impersonated ?? authenticated;
    if (impersonated) { req.impersonator = authenticated; auditor?.impersonated(req.audit, impersonated); }
    req.user = user;
    const info = req.requestInfo;
    const attrs = info.resourceRequest
      ? { user, verb: info.verb, resourceRequest: true, apiGroup: info.group, apiVersion: info.version, resource: info.resource,
          subresource: info.subresource, namespace: info.namespace, name: info.name }
      : { user, verb: info.verb, resourceRequest: false, path: info.path };
    const decision = await authorize(authorizers, attrs);
    auditor?.decision(req.audit, decision.allowed, decision.reason);
    if (!decision.allowed) return sendError(reply, forbiddenFor(info, user, decision.reason));
    return undefined;
  });

  app.addHook('onSend', (req, reply, payload, done) => {
    const a = req.audit;
    if (a) {
      if (Buffer.isBuffer(req.body)) a.requestBody = req.body;
      // Errors' Status for responseStatus and a create's object (its name) at every level; other bodies only at RequestResponse.
      if ((a.event.level === 'RequestResponse' || reply.statusCode >= 400 || a.event.verb === 'create') && (typeof payload === 'string' || Buffer.isBuffer(payload))) a.responseBody = payload.toString();
    }
    const warnings = req.warnings;
    if (warnings?.length) void reply.header('warning', warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', '));
    done(null, payload);
  });

  app.addHook('onResponse', (req, reply, done) => {
    release(req);
    const info = req.requestInfo;
    if (info && o.logger.isLevelEnabled('debug')) {
      o.logger.debug({ verb: info.verb, path: info.path, code: reply.statusCode, ms: Math.round(performance.now() - req.startMs), userAgent: req.headers['user-agent'] }, 'Served request');
    }
    done();
  });

  app.addHook('onClose', async () => { closing.abort(); });

  // Health and metrics on the main port, as upstream serves them.
  // As upstream: each check also at <endpoint>/<name>; 'ok', or with ?verbose or on failure one
  // [+]/[-] line per check. /livez leaves etcd out (an etcd outage must not restart the apiserver).
  const checks: { name: string; check: () => void | Promise<void> }[] = [
    { name: 'ping', check: () => undefined },
    { name: 'etcd', check: async () => { await o.storage.currentResourceVersion(); } },
    ...(o.healthChecks ?? []),
  ];
  const runCheck = async (c: { check: () => void | Promise<void> }) => { try { await c.check(); return true; } catch { return false; } };
  for (const endpoint of ['healthz', 'livez', 'readyz']) {
    const mine = endpoint === 'livez' ? checks.filter((c) => c.name !== 'etcd') : checks;
    app.get(`/${endpoint}`, async (req, reply) => {
      const results = await Promise.all(mine.map(async (c) => [c.name, await runCheck(c)] as const));
      const ok = results.every(([, r]) => r);
      const verbose = (req.query as Record<string, unknown> | undefined)?.['verbose'] !== undefined;
      const body = ok && !verbose ? 'ok'
        : results.map(([n, r]) => (r ? `[+]${n} ok` : `[-]${n} failed: reason withheld`)).join('\n') + `\n${endpoint} check ${ok ? 'passed' : 'failed'}\n`;
      return reply.code(ok ? 200 : 500).type('text/plain; charset=utf-8').send(body);
    });
    for (const c of mine) {
      app.get(`/${endpoint}/${c.name}`, async (_req, reply) => {
        const ok = await runCheck(c);
        return reply.code(ok ? 200 : 500).type('text/plain; charset=utf-8').send(ok ? 'ok' : `internal server error: ${c.name} check failed`);
      });
    }
  }
  app.get('/metrics', async (_req, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));

  // Discovery and OpenAPI follow the registry (the review kinds are in it without storage: their
  // own routes, authentication-api and authorization-api, answer them).
  const resolved = (e: ResourceEntry) => [...e.subresources].map(([name, s]) => resolveSubresource(e.descriptor, name, s));
  registerDiscovery(app, {
    source: { generation: () => registry.generation, resources: () => registry.entries().map((e) => ({ descriptor: e.descriptor, subresources: resolved(e) })) },
  });
  registerOpenApi(app, {
    source: { generation: () => registry.generation, resources: () => registry.entries().map((e) => ({ descriptor: e.descriptor, subresources: resolved(e), schemas: e.openapi, refusedPatchTypes: e.unsupportedPatchTypes })) },
  });
  for (const p of o.plugins ?? []) await p(app);

  const knownFields = new Map<ResourceDescriptor, (obj: unknown) => string[]>();
  const unknownFields: UnknownFieldsCheck | undefined = o.unknownFields === false ? undefined : o.unknownFields ?? ((r, obj) => {
    const own = registry.entryOf(r)?.unknownFields;
    if (own) return own(obj);
    let v = knownFields.get(r);
    if (!v) { v = knownFieldsValidator(r); knownFields.set(r, v); }
    return v(obj);
  });
  const tokenIssuer = o.serviceAccountTokenIssuer;
  const tokenRequest: TokenRequestDeps | undefined = tokenIssuer ? {
    issuer: tokenIssuer, defaultAudiences: [tokenIssuer.issuer ?? DEFAULT_SA_ISSUER], now: () => clock.now(),
    getServiceAccount: (ns, name) => registry.get(ServiceAccounts)!.get(ns, name),
    getPod: (ns, name) => registry.get(Pods)!.get(ns, name),
    getSecret: (ns, name) => registry.get(Secrets)!.get(ns, name),
    getNode: async (name) => { try { return await registry.get(Nodes)!.get('', name); } catch { return undefined; } },
  } : undefined;
  const deps = {
    registry, clock, metrics, table, unknownFields, tokenRequest,
    watchTimeoutSeconds: o.watchTimeoutSeconds ?? 1800, serverSignal: closing.signal, kubeletClient: o.kubeletClient,
  };
  const resourceHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    const info = req.requestInfo;
    if (!info.resourceRequest) throw notFoundError();
    const backend = aggregator.backendFor(info.group, info.version);
    if (backend) return proxyToBackend(backend, req, reply, req.user);
    if (aggregator.isUnavailable(info.group, info.version)) {
      // Upstream's proxy handler: http.Error(w, "service unavailable", 503).
      return reply.code(503).header('content-type', 'text/plain; charset=utf-8').header('x-content-type-options', 'nosniff').send('service unavailable\n');
    }
    const rc: RequestContext = { user: req.user, dryRun: false, warnings: [] };
    req.warnings = rc.warnings;
    return handleResourceRequest(deps, info, rc, req, reply);
  };
  for (const prefix of ['/api/*', '/apis/*']) {
    app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], url: prefix, handler: resourceHandler });
    app.route({ method: 'OPTIONS', url: prefix, handler: async () => { throw methodNotAllowedError(); } });
  }

  // An HTTP CONNECT (a proxy tunnel request) bypasses fastify too; node would just drop the
  // socket. Nothing here tunnels: 405 with a Status, as upstream answers a method it does not serve.
  app.server.on('connect', (_req: IncomingMessage, socket: Duplex) => { writeStatus(socket, methodNotAllowedError()); });

  // exec/attach arrive as HTTP upgrades, which bypass fastify's routing: same stages, by hand.
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    let audit: AuditContext | undefined;
    let upgradeCode = 101;
    void (async () => {
      try {
        const parsed = parseRequestInfo(req.method ?? 'GET', req.url ?? '/', resolveResource);
        // exec/attach/portforward are 'create' on their subresource (upstream: POST-equivalent upgrades).
        const info = parsed.resourceRequest ? { ...parsed, verb: 'create' as const } : parsed;
        // Metrics from the parsed request (CONNECT on its subresource); the upgraded socket's close ends it.
        const ended = trackRequest(parsed, req.url ?? '/', req.headers['content-type'], performance.now());
        if (ended) socket.once('close', () => ended(upgradeCode));
        let authenticated: UserInfo | undefined;
        try { authenticated = await authenticate(authenticators, req); } finally {
          if (auditor) audit = auditor.begin(req, undefined, info, authenticated, auditID(req.headers['audit-id']), clock.now());
        }
        if (!authenticated) throw new ApiError('Unauthorized', 'Unauthorized');
        if (!info.resourceRequest) throw notFoundError();
        // The same impersonation as every other request: `kubectl exec --as` runs as that identity.
        const impersonated = await impersonate(req, authenticated, authorizers);
        if (impersonated) auditor?.impersonated(audit, impersonated);
        const user = impersonated ?? authenticated;
        const decision = await authorize(authorizers, { user, verb: 'create', resourceRequest: true, apiGroup: info.group, apiVersion: info.version,
          resource: info.resource, subresource: info.subresource, namespace: info.namespace, name: info.name });
        auditor?.decision(audit, decision.allowed, decision.reason);
        if (!decision.allowed) throw forbiddenFor(info, user, decision.reason);
        auditor?.finish(audit, 101);
        await proxyUpgrade(registry, info, req, socket, head, o.kubeletClient);
      } catch (err) {
        const apiErr = toApiError(err);
        auditor?.finish(audit, apiErr.code);
        upgradeCode = apiErr.code;
        writeStatus(socket, apiErr);
      }
    })();
  });

  // CustomResourceDefinitions: served once established, their objects removed when they go.
  const crdController = new CrdController({
    registry, crds: registry.get(CustomResourceDefinitions)!, clock, logger: o.logger,
    storage: o.storage, admission: crAdmission,
  });
  // API aggregation: APIServices' groups proxied to their Services' endpoints.
  const aggregator = new Aggregator({ registry, apiServices: registry.get(APIServices)!, clock, logger: o.logger, ...(o.proxyClient ? { clientCert: o.proxyClient } : {}) });
  app.addHook('onReady', async () => {
    void aggregator.run(closing.signal);
    void crdController.run(closing.signal);
    // Existing CRDs are served before the server reports ready (bounded: etcd may be down).
    await Promise.race([crdController.synced, new Promise<void>((r) => { const t = setTimeout(r, 5000); t.unref(); })]);
  });

  if (o.bootstrapNamespaces ?? true) {
    app.addHook('onReady', async () => {
      // First attempt inline (tests and callers expect the namespaces once ready); if etcd is not
      // reachable yet, keep trying in the background instead of failing the start.
      const attempt = async (delayMs: number): Promise<void> => {
        try {
          await ensureNamespaces(registry, clock, SYSTEM_NAMESPACES);
        } catch (err) {
          if (closing.signal.aborted) return;
          o.logger.warn({ err }, 'Could not create the system namespaces, retrying');
          const cancel = clock.setTimeout(() => {
            closing.signal.removeEventListener('abort', cancel);
            void attempt(Math.min(delayMs * 2, 10_000));
          }, delayMs);
          closing.signal.addEventListener('abort', cancel, { once: true });
        }
      };
      await attempt(500);
    });
  }

  return Object.assign(app, { registry, metrics }) as FastifyInstance & { registry: Registry; metrics: ApiServerMetrics };
}

/** Creates the namespaces (and system PriorityClasses) that must exist, tolerating another apiserver doing the same. */
export async function ensureNamespaces(registry: Registry, _clock: Clock, names: readonly string[]): Promise<void> {
  const store = registry.get(Namespaces)!;
  const rc: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, warnings: [] };
  for (const name of names) {
    try {
      await store.create(rc, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } as KubeObject);
    } catch (err) {
      if (toApiError(err).reason !== 'AlreadyExists') throw err;
    }
  }
  for (const pc of SYSTEM_PRIORITY_CLASSES) {
    try {
      await registry.get(PriorityClasses)!.create(rc, '', pc);
    } catch (err) {
      if (toApiError(err).reason !== 'AlreadyExists') throw err;
    }
  }
}

/** Upstream's authorization failure message. */
/** The client's Audit-ID when it is a sane token (upstream accepts any), else a fresh UUID. */
function auditID(h: string | string[] | undefined): string {
  const v = Array.isArray(h) ? h[0] : h;
  return v && v.length <= 128 && /^[\w.:-]+$/.test(v) ? v : randomUUID();
}

function forbiddenFor(info: RequestInfo, user: UserInfo, reason: string) {
  const why = reason ? `: ${reason}` : '';
  if (!info.resourceRequest) {
    return forbidden('', '', `User "${user.username}" cannot ${info.verb} path "${info.path}"${why}`);
  }
  const res = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  const scope = info.namespace ? ` in the namespace "${info.namespace}"` : info.descriptor?.namespaced === false || !info.namespace ? ' at the cluster scope' : '';
  const qualified = info.group ? `${info.resource}.${info.group}` : info.resource;
  return forbidden(qualified, info.name, `User "${user.username}" cannot ${info.verb} resource "${res}" in API group "${info.group}"${scope}${why}`);
}

