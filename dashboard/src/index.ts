export { createDashboard, type Dashboard, type DashboardConfig } from './create-dashboard.js';
export { buildDashboardServer, type Asset, type DashboardServerOptions } from './server/server.js';
export { loadAssets } from './server/assets.js';
export { httpsUpstream, type Upstream, type UpstreamRequest, type UpstreamResponse } from './server/upstream.js';
export { CSRF_HEADER, SECURITY_HEADERS, CONTENT_SECURITY_POLICY, csrfRefusal } from './server/security.js';
export { PROXY_RULES_PATH, nodeProxyRulesReader, type ProxyRules, type ProxyRulesReader } from './server/proxy-rules.js';
