/**
 * Assembles the security stages from flags (kube-apiserver's --client-ca-file, --token-auth-file,
 * --service-account-key-file, --authorization-mode, --anonymous-auth): authenticators, authorizers,
 * admission plugins and the startup hooks (bootstrap RBAC policy, the authorization API).
 * With nothing configured it returns nothing, leaving the server's defaults (anonymous, AlwaysAllow).
 */
import { readFileSync } from 'node:fs';
import { ClusterRoleBindings, ClusterRoles, Pods, RoleBindings, Roles, Secrets, ServiceAccounts, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type { Clock, Logger } from '@mk8s/component-base';
import type { FastifyInstance } from 'fastify';
import type { Registry } from '../registry/index.js';
import { toApiError } from '../endpoints/status.js';
import type { AdmissionPlugin } from '../admission/interfaces.js';
import { NodeRestriction } from '../admission/plugins/node-restriction.js';
import { RbacEscalation } from '../admission/plugins/rbac-escalation.js';
import type { Authenticator } from './authentication.js';
import { AlwaysAllowAuthorizer, type Authorizer } from './authorization.js';
import { X509Authenticator } from './x509.js';
import { RequestHeaderAuthenticator } from './request-header.js';
import type { RequestHeaderConfig } from '../bootstrap/extension-apiserver-authentication.js';
import { TokenFileAuthenticator, parseTokenFile } from './token-file.js';
import { ServiceAccountAuthenticator, ServiceAccountTokenIssuer } from './service-account.js';
import { PublicPathsAnonymousAuthenticator } from './anonymous.js';
import { RbacAuthorizer, type RbacSource } from './rbac.js';
import { NodeAuthorizer } from './node.js';
import { ensureBootstrapPolicy } from './bootstrap-policy.js';
import { registerAuthorizationApi } from '../authorization-api/index.js';
import { registerAuthenticationApi } from '../authentication-api/index.js';

export type AuthorizationMode = 'AlwaysAllow' | 'RBAC' | 'Node';
export const AUTHORIZATION_MODES: readonly AuthorizationMode[] = ['AlwaysAllow', 'RBAC', 'Node'];

export interface SecurityConfig {
  /** Verify client certificates against this CA (x509 authentication). */
  clientCAFile?: string;
  /** Static bearer tokens (CSV token,user,uid,"groups"). */
  tokenAuthFile?: string;
  /** PEM keys (public or private) that verify ServiceAccount tokens. */
  serviceAccountKeyFiles?: string[];
  /** @default DEFAULT_SA_ISSUER */
  serviceAccountIssuer?: string;
  /** PEM private key that signs the tokens the TokenRequest API issues (--service-account-signing-key-file). @default none: serviceaccounts/token answers 404 */
  serviceAccountSigningKeyFile?: string;
  /** In order; @default ['AlwaysAllow'] */
  authorizationModes?: AuthorizationMode[];
  /** Anonymous requests reach the public paths (/healthz, /livez, /readyz, /version). @default true */
  anonymousAuth?: boolean;
  /** Requestheader authentication of a front proxy (--requestheader-*). @default none */
  requestHeader?: RequestHeaderConfig;
}

export interface SecurityParts {
  authenticators?: Authenticator[];
  authorizers?: Authorizer[];
  admission: AdmissionPlugin[];
  plugins: ((app: FastifyInstance) => void | Promise<void>)[];
  /** Signs TokenRequest tokens, when a signing key is configured. */
  tokenIssuer?: ServiceAccountTokenIssuer;
}

/** A registry filled in once the server is built (the stages are built before it). */
export interface RegistryRef { registry?: Registry }

const store = (ref: RegistryRef, r: ResourceDescriptor) => {
  const s = ref.registry?.get(r);
  if (!s) throw new Error('registry not ready');
  return s;
};
async function getOrUndefined(ref: RegistryRef, r: ResourceDescriptor, ns: string, name: string, resourceVersion?: '0'): Promise<KubeObject | undefined> {
  try { return await store(ref, r).get(ns, name, resourceVersion ? { resourceVersion } : {}); } catch (err) { if (toApiError(err).reason === 'NotFound') return undefined; throw err; }
}
/** From the watch cache, as upstream's listers; on a miss from etcd, as its token getter's client fallback (an object just created). */
async function getCachedOrLive(ref: RegistryRef, r: ResourceDescriptor, ns: string, name: string): Promise<KubeObject | undefined> {
  return (await getOrUndefined(ref, r, ns, name, '0')) ?? getOrUndefined(ref, r, ns, name);
}

/** RBAC objects read through the registry (lists from the watch cache). */
export function registryRbacSource(ref: RegistryRef): RbacSource {
  return {
    listClusterRoleBindings: async () => (await store(ref, ClusterRoleBindings).list('', { resourceVersion: '0' })).items,
    listRoleBindings: async (ns) => (await store(ref, RoleBindings).list(ns, { resourceVersion: '0' })).items,
    listClusterRoles: async () => (await store(ref, ClusterRoles).list('', { resourceVersion: '0' })).items,
    // Upstream's RBAC authorizer reads its listers only (no live fallback): the watch cache here.
    getClusterRole: (name) => getOrUndefined(ref, ClusterRoles, '', name, '0'),
    getRole: (ns, name) => getOrUndefined(ref, Roles, ns, name, '0'),
  };
}

export function buildSecurity(cfg: SecurityConfig, o: { clock: Clock; logger: Logger; ref?: RegistryRef }): SecurityParts {
  const ref: RegistryRef = o.ref ?? {};
  const out: SecurityParts = { admission: [], plugins: [] };
  const authn: Authenticator[] = [];
  // Before x509, as upstream's union: the proxy's certificate is not one of the client CA's.
  if (cfg.requestHeader) authn.push(new RequestHeaderAuthenticator(cfg.requestHeader, () => o.clock.now()));
  if (cfg.clientCAFile) authn.push(new X509Authenticator(() => o.clock.now()));
  if (cfg.tokenAuthFile) authn.push(new TokenFileAuthenticator(parseTokenFile(readFileSync(cfg.tokenAuthFile, 'utf8'))));
  const signingKey = cfg.serviceAccountSigningKeyFile ? readFileSync(cfg.serviceAccountSigningKeyFile, 'utf8') : undefined;
  if (signingKey) {
    out.tokenIssuer = new ServiceAccountTokenIssuer({ privateKeyPem: signingKey, clock: o.clock, ...(cfg.serviceAccountIssuer ? { issuer: cfg.serviceAccountIssuer } : {}) });
  }
  if (cfg.serviceAccountKeyFiles?.length || signingKey) {
    // The signing key's public half always verifies what this server issues.
    const pems = [...(cfg.serviceAccountKeyFiles ?? []).map((f) => readFileSync(f, 'utf8')), ...(signingKey ? [signingKey] : [])];
    authn.push(new ServiceAccountAuthenticator({
      publicKeyPems: pems, clock: o.clock,
      ...(cfg.serviceAccountIssuer ? { issuer: cfg.serviceAccountIssuer } : {}),
      getServiceAccount: (ns, name) => getCachedOrLive(ref, ServiceAccounts, ns, name),
      getPod: (ns, name) => getCachedOrLive(ref, Pods, ns, name),
      getSecret: (ns, name) => getCachedOrLive(ref, Secrets, ns, name),
    }));
  }
  if (authn.length > 0) {
    if (cfg.anonymousAuth ?? true) authn.push(new PublicPathsAnonymousAuthenticator());
    out.authenticators = authn;
  }
  const modes = cfg.authorizationModes ?? ['AlwaysAllow'];
  const rbac = new RbacAuthorizer(registryRbacSource(ref));
  const authorizers: Authorizer[] = modes.map((m) => {
    switch (m) {
      case 'AlwaysAllow': return new AlwaysAllowAuthorizer();
      case 'RBAC': return rbac;
      case 'Node': return new NodeAuthorizer(async (node, ns) => (await store(ref, Pods).list(ns, {
        resourceVersion: '0', predicate: (p) => ((p['spec'] ?? {}) as { nodeName?: string }).nodeName === node,
      })).items);
      default: throw new Error(`unknown authorization mode ${String(m)}`);
    }
  });
  if (!(modes.length === 1 && modes[0] === 'AlwaysAllow')) out.authorizers = authorizers;
  if (modes.includes('Node')) out.admission.push(new NodeRestriction());
  if (modes.includes('RBAC')) out.admission.push(new RbacEscalation({ rbac, authorizers }));
  out.plugins.push((app) => {
    registerAuthorizationApi(app, { authorizers: out.authorizers ?? authorizers });
    if (out.authenticators) registerAuthenticationApi(app, { authenticators: out.authenticators });
    app.addHook('onReady', async () => {
      ref.registry = (app as FastifyInstance & { registry: Registry }).registry;
      if (!modes.includes('RBAC')) return;
      try { await ensureBootstrapPolicy(ref.registry); } catch (err) {
        // etcd not reachable yet: keep trying in the background, as the namespaces bootstrap does.
        o.logger.warn({ err }, 'Could not create the bootstrap RBAC policy, retrying');
        let delay = 500;
        const retry = () => { o.clock.setTimeout(() => { ensureBootstrapPolicy(ref.registry!).catch(() => { delay = Math.min(delay * 2, 10_000); retry(); }); }, delay); };
        retry();
      }
    });
  });
  return out;
}

/** Parses --authorization-mode=RBAC,Node. */
export function parseAuthorizationModes(v: string): AuthorizationMode[] {
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(s)) throw new Error(`unknown authorization mode "${s}" (want ${AUTHORIZATION_MODES.join(', ')})`);
    return s as AuthorizationMode;
  });
}
