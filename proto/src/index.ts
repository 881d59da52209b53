export type * from './types.js';
export { nsToMs, msToNs } from './types.js';
export type { RuntimeService, ImageService, RuntimeMethod, ImageMethod } from './runtime-service.js';
export {
  CriError, criCodeFromGrpc, criErrorCode, isNotFound, isFailedPrecondition, isDeadlineExceeded, isUnavailable,
  isInvalidArgument, type CriErrorCode,
} from './errors.js';
export { RemoteRuntimeService, RemoteImageService, type RemoteServiceOptions } from './grpc/remote.js';
export { runtimeServiceHandlers, imageServiceHandlers, serveCri, type CriServerOptions } from './grpc/handlers.js';
export { loadCri, CRI_PROTO_PATH, CRI_LOADER_OPTIONS, unixAddress } from './grpc/load.js';
export { normalizeImageRef } from './image-ref.js';
export { linuxContainerResources, milliCpuToShares, milliCpuToQuota, QUOTA_PERIOD_US, type ContainerResourceAmounts } from './resources.js';
export { CpuRateCache, type CpuSample, type CpuRateCacheOptions } from './cpu-rate.js';
export { CumulativeSum } from './cumulative-sum.js';
