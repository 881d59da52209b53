// Original file: cri.proto

import type { Long } from '@grpc/proto-loader';

export interface ExecSyncRequest {
  'containerId'?: (string);
  'cmd'?: (string)[];
  /**
   * Seconds; 0 = no timeout.
   */
  'timeout'?: (number | string | Long);
}

export interface ExecSyncRequest__Output {
  'containerId': (string);
  'cmd': (string)[];
  /**
   * Seconds; 0 = no timeout.
   */
  'timeout': (number);
}
