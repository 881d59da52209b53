// Original file: cri.proto

import type { ExecExit as _runtime_v1_ExecExit, ExecExit__Output as _runtime_v1_ExecExit__Output } from '../../runtime/v1/ExecExit.js';

export interface ExecResponse {
  'stdout'?: (Buffer | Uint8Array | string);
  'stderr'?: (Buffer | Uint8Array | string);
  'exit'?: (_runtime_v1_ExecExit | null);
  'msg'?: "stdout"|"stderr"|"exit";
}

export interface ExecResponse__Output {
  'stdout'?: (Buffer);
  'stderr'?: (Buffer);
  'exit'?: (_runtime_v1_ExecExit__Output | null);
  'msg'?: "stdout"|"stderr"|"exit";
}
