export * from './cidr.js';
export * from './skel.js';
export { DiskIpam, IpamExhaustedError, LockTimeoutError, type Allocation, type DiskIpamOptions } from './ipam.js';
export { hostVethName, IprouteLinkOps, type LinkOps, type PodInterfaceSpec } from './link-ops.js';
export { runPlugin, parseConf, type BridgeNetConf, type PluginDeps, type PluginOutcome } from './bridge-plugin.js';
export { renderConflist, writeConflist, CONFLIST_NAME, NETWORK_NAME, PLUGIN_TYPE, type ConflistOptions } from './conflist.js';
export { IprouteRouteOps, ROUTE_PROTO, type HostGwRoute, type RouteOps } from './route-ops.js';
export { NodeRouteAgent, desiredRoutes, type NodeRouteAgentOptions } from './route-agent.js';
export { runCommand, type CommandRunner, type CmdResult } from './exec.js';
