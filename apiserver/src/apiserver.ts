/**
 * createApiServer: the apiserver as a Component (listens, serves until the signal aborts).
 * Storage is Etcd3Storage behind the Cacher, so watches are served from memory and etcd load
 * does not grow with watchers. Several processes may run against one etcd (it is stateless).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { createLogger, realClock, runEvery, type Component, type Logger } from '@mk8s/component-base';
import type { FastifyInstance } from 'fastify';
import { registryPrefix } from '@mk8s/api';
import { buildApiServer, SERVED_RESOURCES, type ApiServerOptions } from './server.js';
import type { Storage } from './storage/interfaces.js';
import { Etcd3Storage } from './storage/etcd3-storage.js';
import { Cacher } from './storage/cacher.js';
import { InstrumentedStorage } from './storage/instrumented-storage.js';
import { ApiServerMetrics } from './metrics.js';
import { startCompactor } from './storage/compactor.js';
import { ServiceAllocator, type Registry } from './registry/index.js';
import { ApiserverEndpointReconciler, ENDPOINT_RENEW_INTERVAL_MS } from './bootstrap/kubernetes-service.js';
import { extensionApiserverAuthenticationData, reconcileExtensionApiserverAuthentication, type RequestHeaderConfig } from './bootstrap/extension-apiserver-authentication.js';
import { buildSecurity, type SecurityConfig } from './auth/security.js';
import { listenTls, type TlsServingOptions } from './auth/secure-serving.js';
import { Auditor } from './audit/audit.js';
import { LogBackend } from './audit/log-backend.js';
import { loadAuditPolicy } from './audit/policy.js';
import { checkEncryptionConfig, encryptionTransformer, loadEncryptionConfig } from './auth/encryption.js';

export interface ApiServerConfig extends Omit<ApiServerOptions, 'storage' | 'logger'> {
  /** etcd client URLs. */
  etcdServers: string[];
  /** Addresses to listen on. @default ['127.0.0.1'] */
  bindAddresses?: string[];
  /** 0 picks a free port (shared by every bind address). @default 6443 */
  port?: number;
  logger?: Logger;
  /**
   * Address pods use to reach this apiserver, published in the `default/kubernetes` Service's
   * endpoints. @default the first non-loopback, non-wildcard bind address (none: nothing is published)
   */
  advertiseAddress?: string;
  /** Use this storage instead of etcd (tests); not closed by the component. */
  storage?: Storage;
  /**
   * How often to compact etcd history (upstream --etcd-compaction-interval); 0 disables. Not run
   * with an injected `storage`. @default 300000 (5 minutes)
   */
  etcdCompactionIntervalMs?: number;
  /** Authentication/authorization flags (auth/security.ts). @default none: anonymous, AlwaysAllow */
  security?: SecurityConfig;
  /** Serve HTTPS on every bind address instead of HTTP. @default plain HTTP */
  tls?: TlsServingOptions;
  /** EncryptionConfiguration file (--encryption-provider-config): encrypts those resources in etcd. @default none */
  encryptionProviderConfig?: string;
  /** TLS towards etcd (--etcd-cafile, --etcd-certfile, --etcd-keyfile): file paths. @default plaintext */
  etcdTls?: { caFile: string; certFile?: string; keyFile?: string };
  /**
   * Audit logging (--audit-policy-file, --audit-log-path '-' = stdout, --audit-log-maxsize MB,
   * --audit-log-maxbackup, --audit-log-maxage days): both files needed, as upstream. @default off
   */
  auditLog?: { policyFile: string; path: string; maxSizeMB?: number; maxBackups?: number; maxAgeDays?: number };
  /**
   * The requestheader flags (--requestheader-client-ca-file, -allowed-names, -username-headers,
   * -group-headers, -extra-headers-prefix), published with the client CA in
   * kube-system/extension-apiserver-authentication at start-up. @default none
   */
  requestHeader?: RequestHeaderConfig;
}

export interface ApiServerComponent extends Component {
  /** `http://host:port` of the first bind address; throws before ready. */
  readonly url: string;
  /** One URL per bind address; empty before ready. */
  readonly urls: string[];
  /** The fastify instance once running (for inject in tests); undefined before ready. */
  readonly app: FastifyInstance | undefined;
}

export function createApiServer(cfg: ApiServerConfig): ApiServerComponent {
  const log = cfg.logger ?? createLogger({ component: 'apiserver' });
  let resolveReady!: () => void; let rejectReady!: (err: unknown) => void;
  const ready = new Promise<void>((res, rej) => { resolveReady = res; rejectReady = rej; });
  ready.catch(() => { /* surfaced by run() */ });
  const urls: string[] = [];
  let app: FastifyInstance | undefined;

  return {
    name: 'apiserver',
    ready,
    get url() {
      if (urls.length === 0) throw new Error('apiserver is not listening yet');
      return urls[0]!;
    },
    get urls() { return [...urls]; },
    get app() { return app; },
    async run(signal: AbortSignal): Promise<void> {
      const ownStorage = !cfg.storage;
      const etcdTls = cfg.etcdTls;
      // Refused at startup when invalid, as upstream; the whole value of each listed resource is encrypted.
      const encryption = cfg.encryptionProviderConfig ? loadEncryptionConfig(cfg.encryptionProviderConfig) : undefined;
      const etcd = cfg.storage ? undefined : new Etcd3Storage({
        endpoints: cfg.etcdServers, logger: log.child({ component: 'etcd3' }),
        ...(encryption ? { transformer: encryptionTransformer(encryption) } : {}),
        ...(etcdTls ? { credentials: {
          rootCertificate: readFileSync(etcdTls.caFile),
          ...(etcdTls.certFile ? { certChain: readFileSync(etcdTls.certFile) } : {}),
          ...(etcdTls.keyFile ? { privateKey: readFileSync(etcdTls.keyFile) } : {}),
        } } : {}),
      });
      const metrics = cfg.metrics ?? new ApiServerMetrics();
      // etcd metrics count what reaches etcd: between the watch cache and the etcd storage.
      const cacher = etcd ? new Cacher({ storage: new InstrumentedStorage(etcd, (op, type, seconds, failed) => metrics.observeEtcd(op, type, seconds, failed)), logger: log.child({ component: 'cacher' }) }) : undefined;
      const stopCompactor = new AbortController();
      const storage: Storage = cfg.storage ?? cacher!;
      const extra: Server[] = [];
      let endpointReconciler: ApiserverEndpointReconciler | undefined;
      let endpointLoop: Promise<void> | undefined;
      let auditBackend: LogBackend | undefined;
      try {
        const { etcdServers: _e, bindAddresses: _b, port: _p, logger: _l, storage: _s, advertiseAddress: _a, etcdCompactionIntervalMs: _c, security: _sec, tls: _tls, encryptionProviderConfig: _enc, etcdTls: _etls, auditLog: _audit, requestHeader: _rh, ...opts } = cfg;
        const al = cfg.auditLog;
        if (al) {
          auditBackend = new LogBackend({ path: al.path, clock: cfg.clock ?? realClock, logger: log,
            ...(al.maxSizeMB !== undefined ? { maxSizeMB: al.maxSizeMB } : {}), ...(al.maxBackups !== undefined ? { maxBackups: al.maxBackups } : {}),
            ...(al.maxAgeDays !== undefined ? { maxAgeDays: al.maxAgeDays } : {}) });
        }
        const audit = al && auditBackend ? new Auditor({ policy: loadAuditPolicy(al.policyFile), backend: auditBackend, clock: cfg.clock ?? realClock }) : undefined;
        const sec = cfg.security ? buildSecurity({ ...cfg.security, ...(cfg.requestHeader ? { requestHeader: cfg.requestHeader } : {}) }, { clock: cfg.clock ?? realClock, logger: log }) : undefined;
        app = await buildApiServer({
          ...opts, storage, logger: log, metrics,
          ...(audit ? { audit } : {}),
          ...(encryption ? { healthChecks: [...(opts.healthChecks ?? []), { name: 'encryption-providers', check: () => checkEncryptionConfig(encryption) }] } : {}),
          ...(sec?.authenticators ? { authenticators: sec.authenticators } : {}),
          ...(sec?.authorizers ? { authorizers: sec.authorizers } : {}),
          ...(sec?.tokenIssuer ? { serviceAccountTokenIssuer: sec.tokenIssuer } : {}),
          ...(sec ? { admission: [...(opts.admission ?? []), ...sec.admission], plugins: [...(opts.plugins ?? []), ...sec.plugins] } : {}),
        });
        const hosts = cfg.bindAddresses?.length ? cfg.bindAddresses : ['127.0.0.1'];
        let port: number;
        if (cfg.tls) {
          // HTTPS servers feed the fastify instance, which itself listens nowhere.
          await app.ready();
          const served = await listenTls(app, hosts, cfg.port ?? 6443, cfg.tls);
          extra.push(...served.servers);
          urls.push(...served.urls);
          port = served.port;
        } else {
          await app.listen({ host: hosts[0]!, port: cfg.port ?? 6443 });
          port = (app.server.address() as AddressInfo).port;
          urls.push(urlOf(hosts[0]!, port));
        }
        for (const host of cfg.tls ? [] : hosts.slice(1)) {
          // Further addresses feed the same fastify instance (requests and upgrades).
          const s = createServer();
          const main = app.server;
          s.on('request', (req, res) => main.emit('request', req, res));
          s.on('upgrade', (req, socket, head) => main.emit('upgrade', req, socket, head));
          s.on('connect', (req, socket, head) => main.emit('connect', req, socket, head));
          await new Promise<void>((resolve, reject) => { s.once('error', reject); s.listen(port, host, () => resolve()); });
          extra.push(s);
          urls.push(urlOf(host, port));
        }
        // Caches start now, as upstream's do at startup: a watch from a list's resourceVersion must not
        // find a cache that began after it (that would be a 410 for every first watcher).
        if (cacher) {
          await Promise.all(SERVED_RESOURCES.map((r) => cacher.warm(registryPrefix(r))));
          // Resources added later (custom resources) start caching as soon as they are served.
          const a = app as FastifyInstance & { registry: Registry };
          for (const e of a.registry.entries()) if (e.store) void cacher.warm(registryPrefix(e.descriptor));
          a.registry.onChange((c) => { if (c.type === 'added' && c.entry.store) void cacher.warm(registryPrefix(c.entry.descriptor)).catch(() => undefined); });
        }
        const advertise = cfg.advertiseAddress ?? hosts.find((h) => !isLoopback(h) && h !== '0.0.0.0' && h !== '::');
        if (advertise && advertise !== '0.0.0.0' && advertise !== '::') {
          const a = app as FastifyInstance & { registry: Registry };
          const clock = cfg.clock ?? realClock;
          endpointReconciler = new ApiserverEndpointReconciler(a.registry, { advertiseAddress: advertise, port, clusterIP: serviceIP(cfg.serviceClusterIPRange), hostname: hostname(), now: () => clock.now() });
          // The lease endpoint reconciler: renew this apiserver's identity Lease, list the live ones in the kubernetes endpoints.
          endpointLoop = runEvery(ENDPOINT_RENEW_INTERVAL_MS, () => endpointReconciler!.reconcile(), { clock, signal: stopCompactor.signal, logger: log, what: 'Reconciling the kubernetes Service endpoints' });
        }
        // Upstream's ClientCARegistrationHook: extension apiservers read whom to trust from this ConfigMap.
        const clientCAFile = cfg.security?.clientCAFile;
        if (clientCAFile || cfg.requestHeader) {
          const a = app as FastifyInstance & { registry: Registry };
          const data = extensionApiserverAuthenticationData({
            ...(clientCAFile ? { clientCA: readFileSync(clientCAFile, 'utf8') } : {}),
            ...(cfg.requestHeader ? { requestHeader: cfg.requestHeader } : {}),
          });
          void (async () => {
            for (let delay = 500; !signal.aborted; delay = Math.min(delay * 2, 10_000)) {
              try { await reconcileExtensionApiserverAuthentication(a.registry, data); return; } catch (err) {
                log.warn({ err }, 'Could not publish kube-system/extension-apiserver-authentication, retrying');
              }
              await new Promise((r) => setTimeout(r, delay));
            }
          })();
        }
        const compaction = cfg.etcdCompactionIntervalMs ?? 300_000;
        if (etcd && compaction > 0) {
          startCompactor({ client: etcd.client, intervalMs: compaction, logger: log.child({ component: 'compactor' }), signal: stopCompactor.signal });
        }
        log.info({ urls, etcd: cfg.etcdServers }, 'Started serving');
        resolveReady();
      } catch (err) {
        stopCompactor.abort();
        rejectReady(err);
        await Promise.all(extra.map((s) => closeServer(s)));
        await app?.close().catch(() => undefined);
        if (ownStorage) await storage.close().catch(() => undefined);
        auditBackend?.close();
        throw err;
      }
      if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      stopCompactor.abort();
      await endpointLoop;
      // Upstream's RemoveEndpoints on shutdown: the others stop sending pods here at once, not when the Lease expires.
      if (endpointReconciler) {
        await Promise.race([endpointReconciler.remove(), new Promise((r) => setTimeout(r, 3_000).unref())])
          .catch((err: unknown) => log.warn({ err }, 'Could not remove this apiserver from the kubernetes Service endpoints'));
      }
      for (const s of extra) s.closeAllConnections();
      await Promise.all(extra.map((s) => closeServer(s)));
      await app.close();
      if (ownStorage) await storage.close();
      auditBackend?.close();
      log.info('Stopped serving');
    },
  };
}

const isLoopback = (h: string) => h === 'localhost' || h.startsWith('127.') || h === '::1';

function serviceIP(range: string | undefined): string {
  return new ServiceAllocator({ storage: undefined as never, ...(range ? { serviceCidr: range } : {}) }).apiServerServiceIP;
}

/** Go's time.ParseDuration subset for flags (`5m`, `1h30m`, `300s`, `0`); milliseconds. */
export function parseDurationMs(v: string): number {
  if (v.trim() === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  let total = 0; let m: RegExpExecArray | null; let end = 0;
  while ((m = re.exec(v)) !== null) {
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    end = re.lastIndex;
  }
  if (end === 0 || end !== v.length) throw new Error(`invalid duration "${v}"`);
  return total;
}

function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function closeServer(s: Server): Promise<void> {
  return new Promise((resolve) => s.close(() => resolve()));
}
