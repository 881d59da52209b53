export { startEtcdCluster, etcdMemberArgs, etcdInitialCluster, type EtcdCluster, type StartEtcdClusterOptions, type EtcdMemberArgsOptions, type EtcdClientTls } from './etcd-cluster.js';
export { MemoryStorage, type MemoryStorageOptions } from './memory-storage.js';
export { defineStorageConformance, type StorageConformanceFixture } from './storage-conformance.js';
export { startTestApiServer, kubeconfig, type TestApiServer, type TestApiServerOptions } from './test-server.js';
export { kubectlRunner, type KubectlRunner, type KubectlRun } from './kubectl.js';
export { defineRegistryConformance, type RegistryConformanceFixture } from './registry-conformance.js';
