export * from './names.js';
export * from './records.js';
export * from './record-store.js';
export * from './dns-cache.js';
export * from './respond.js';
export * from './server.js';
export * from './metrics.js';
export * from './create-cluster-dns.js';
