export { registerDiscovery, type DiscoveryOptions } from './register.js';
export { SERVER_VERSION, type VersionInfo } from './version.js';
export { subresourceInfo, type ResolvedSubresource } from './subresources.js';
export {
  groupVersions, apiResourceList, aggregatedDiscovery, negotiateAggregated, aggregatedContentType, storageVersionHash,
  type GroupVersion,
} from './documents.js';
export { discoveredFromDescriptors, type DiscoveredResource } from './documents.js';
export { knownSubresource, resolveSubresource, type SubresourceInfo } from './subresources.js';
export type { DiscoverySource } from './register.js';
