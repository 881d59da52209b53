// Original file: cri.proto

import type { NetworkUsage as _runtime_v1_NetworkUsage, NetworkUsage__Output as _runtime_v1_NetworkUsage__Output } from '../../runtime/v1/NetworkUsage.js';

export interface LinuxPodSandboxStats {
  'network'?: (_runtime_v1_NetworkUsage | null);
}

export interface LinuxPodSandboxStats__Output {
  'network': (_runtime_v1_NetworkUsage__Output | null);
}
