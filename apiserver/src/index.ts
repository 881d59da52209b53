export { buildApiServer, ensureNamespaces, SYSTEM_NAMESPACES, SERVED_RESOURCES, type ApiServerOptions } from './server.js';
export { ApiServerMetrics } from './metrics.js';
export type { Storage, StorageEvent, StorageList, StorageListOptions, StorageWatchOptions, Preconditions } from './storage/interfaces.js';
export { AnonymousAuthenticator, ANONYMOUS_USER, type Authenticator, type UserInfo } from './auth/authentication.js';
export { AlwaysAllowAuthorizer, type Authorizer, type AuthorizationAttributes, type Decision } from './auth/authorization.js';
export type { AdmissionPlugin, AdmissionAttributes, AdmissionOperation } from './admission/interfaces.js';
export { NamespaceLifecycle, IMMORTAL_NAMESPACES } from './admission/namespace-lifecycle.js';
export { parseRequestInfo, type RequestInfo, type ResourceRequestInfo } from './endpoints/request-info.js';
export { createRegistry, Store, STRATEGIES, type Registry, type RestStrategy, type RequestContext } from './registry/index.js';
