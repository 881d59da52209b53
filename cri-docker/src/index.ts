export { createCriDockerShim, type CriDockerShim, type CriDockerShimOptions } from './shim.js';
export { DockerRuntimeService, DockerImageService } from './docker-service.js';
export { CniNetwork, ipFromResult, OWN_CONFLIST, type CniConfList, type CniExec, type CniOptions } from './cni/cni.js';
export * from './labels.js';
export { StatsReader, dirUsage, type StatsReaderOptions } from './stats-reader.js';
export { detectCgroupLayout, cgroupDirs, parseProcCgroup, readCgroupUsage, type CgroupDirs, type CgroupLayout, type CgroupUsage } from './cgroups.js';
