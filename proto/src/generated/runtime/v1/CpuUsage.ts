// Original file: cri.proto

import type { UInt64Value as _runtime_v1_UInt64Value, UInt64Value__Output as _runtime_v1_UInt64Value__Output } from '../../runtime/v1/UInt64Value.js';
import type { Long } from '@grpc/proto-loader';

export interface CpuUsage {
  'timestamp'?: (number | string | Long);
  /**
   * Cumulative CPU time in nanoseconds.
   */
  'usageCoreNanoSeconds'?: (_runtime_v1_UInt64Value | null);
  /**
   * Average over the sampling window (the runtime keeps earlier samples: at least 1 s, as
   * cadvisor's housekeeping interval, so a scrape every 15 s reads the rate over those 15 s);
   * unset on the first sample of a container.
   */
  'usageNanoCores'?: (_runtime_v1_UInt64Value | null);
}

export interface CpuUsage__Output {
  'timestamp': (number);
  /**
   * Cumulative CPU time in nanoseconds.
   */
  'usageCoreNanoSeconds': (_runtime_v1_UInt64Value__Output | null);
  /**
   * Average over the sampling window (the runtime keeps earlier samples: at least 1 s, as
   * cadvisor's housekeeping interval, so a scrape every 15 s reads the rate over those 15 s);
   * unset on the first sample of a container.
   */
  'usageNanoCores': (_runtime_v1_UInt64Value__Output | null);
}
