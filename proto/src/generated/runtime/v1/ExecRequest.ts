// Original file: cri.proto

import type { ExecStart as _runtime_v1_ExecStart, ExecStart__Output as _runtime_v1_ExecStart__Output } from '../../runtime/v1/ExecStart.js';
import type { TerminalSize as _runtime_v1_TerminalSize, TerminalSize__Output as _runtime_v1_TerminalSize__Output } from '../../runtime/v1/TerminalSize.js';

export interface ExecRequest {
  'start'?: (_runtime_v1_ExecStart | null);
  'stdin'?: (Buffer | Uint8Array | string);
  'resize'?: (_runtime_v1_TerminalSize | null);
  'closeStdin'?: (boolean);
  'msg'?: "start"|"stdin"|"resize"|"closeStdin";
}

export interface ExecRequest__Output {
  'start'?: (_runtime_v1_ExecStart__Output | null);
  'stdin'?: (Buffer);
  'resize'?: (_runtime_v1_TerminalSize__Output | null);
  'closeStdin'?: (boolean);
  'msg'?: "start"|"stdin"|"resize"|"closeStdin";
}
