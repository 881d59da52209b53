// Original file: cri.proto

import type { Int64Value as _runtime_v1_Int64Value, Int64Value__Output as _runtime_v1_Int64Value__Output } from '../../runtime/v1/Int64Value.js';
import type { Long } from '@grpc/proto-loader';

export interface ContainerLogsRequest {
  'containerId'?: (string);
  'follow'?: (boolean);
  /**
   * Last N lines only; unset = all.
   */
  'tailLines'?: (_runtime_v1_Int64Value | null);
  /**
   * Prefix each line with an RFC3339Nano timestamp and a space.
   */
  'timestamps'?: (boolean);
  /**
   * Only lines at or after this time (nanoseconds; 0 = from the start).
   */
  'sinceTime'?: (number | string | Long);
}

export interface ContainerLogsRequest__Output {
  'containerId': (string);
  'follow': (boolean);
  /**
   * Last N lines only; unset = all.
   */
  'tailLines': (_runtime_v1_Int64Value__Output | null);
  /**
   * Prefix each line with an RFC3339Nano timestamp and a space.
   */
  'timestamps': (boolean);
  /**
   * Only lines at or after this time (nanoseconds; 0 = from the start).
   */
  'sinceTime': (number);
}
