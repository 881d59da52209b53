/** What other workspaces (bench/) use of mkctl: the balancer's config (cluster/haproxy.ts). */
export { haproxyArgs, haproxyCommand, parseServerStates, renderHaproxyConfig, type HaproxyConfigOptions } from './cluster/haproxy.js';
