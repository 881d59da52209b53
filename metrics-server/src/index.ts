export { parsePromText, PromParseError, type PromSample } from './prom-text.js';
export { decodeBatch, mergeBatches, emptyBatch, type MetricsBatch, type MetricsPoint, type PodMetricsPoint } from './decode.js';
export { MetricsStorage, resourceUsage, FRESH_CONTAINER_MIN_RESOLUTION_MS, type NodeUsage, type PodUsage, type ContainerUsage, type Usage } from './storage.js';
export { Scraper, httpsKubeletClient, kubeletTarget, DEFAULT_ADDRESS_TYPES, type KubeletClient, type KubeletTarget, type AddressType, type NodeLike } from './scraper.js';
export { route, serve, attributesFor, usageList, goDuration, nodeMetrics, podMetrics, GROUP, VERSION, GROUP_VERSION, type ApiSources, type MetaLike, type Route, type Attributes } from './api.js';
export { DelegatedAuth, forbiddenMessage, ALWAYS_ALLOW_PATHS, type UserInfo, type RequestHeaderConfig, type DelegatedAuthOptions } from './delegated-auth.js';
export { handle, serveSecure, type HandlerDeps, type HealthCheck } from './server.js';
export { newMetricsServerMetrics, type MetricsServerMetrics } from './metrics.js';
export { createMetricsServer, type MetricsServerConfig, type MetricsServerComponent } from './create-metrics-server.js';
