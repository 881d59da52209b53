// Original file: cri.proto

import type { Long } from '@grpc/proto-loader';

export interface StopContainerRequest {
  'containerId'?: (string);
  /**
   * Seconds to wait after SIGTERM before SIGKILL.
   */
  'timeout'?: (number | string | Long);
}

export interface StopContainerRequest__Output {
  'containerId': (string);
  /**
   * Seconds to wait after SIGTERM before SIGKILL.
   */
  'timeout': (number);
}
