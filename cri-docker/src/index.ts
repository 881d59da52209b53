export { createCriDockerShim, type CriDockerShim, type CriDockerShimOptions } from './shim.js';
export { DockerRuntimeService, DockerImageService } from './docker-service.js';
export { CniNetwork, ipFromResult, OWN_CONFLIST, type CniConfList, type CniExec, type CniOptions } from './cni/cni.js';
export * from './labels.js';
