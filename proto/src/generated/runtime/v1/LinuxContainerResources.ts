// Original file: cri.proto

import type { Long } from '@grpc/proto-loader';

/**
 * LinuxContainerResources: what Docker can enforce. cpu_shares from requests.cpu,
 * cpu_quota/cpu_period from limits.cpu, memory_limit_in_bytes from limits.memory.
 */
export interface LinuxContainerResources {
  'cpuPeriod'?: (number | string | Long);
  'cpuQuota'?: (number | string | Long);
  'cpuShares'?: (number | string | Long);
  'memoryLimitInBytes'?: (number | string | Long);
  'oomScoreAdj'?: (number | string | Long);
  'cpusetCpus'?: (string);
  'cpusetMems'?: (string);
  'memorySwapLimitInBytes'?: (number | string | Long);
}

/**
 * LinuxContainerResources: what Docker can enforce. cpu_shares from requests.cpu,
 * cpu_quota/cpu_period from limits.cpu, memory_limit_in_bytes from limits.memory.
 */
export interface LinuxContainerResources__Output {
  'cpuPeriod': (number);
  'cpuQuota': (number);
  'cpuShares': (number);
  'memoryLimitInBytes': (number);
  'oomScoreAdj': (number);
  'cpusetCpus': (string);
  'cpusetMems': (string);
  'memorySwapLimitInBytes': (number);
}
