// Original file: cri.proto

import type { LinuxSandboxSecurityContext as _runtime_v1_LinuxSandboxSecurityContext, LinuxSandboxSecurityContext__Output as _runtime_v1_LinuxSandboxSecurityContext__Output } from '../../runtime/v1/LinuxSandboxSecurityContext.js';

export interface LinuxPodSandboxConfig {
  /**
   * Parent cgroup of the sandbox (unused by the Docker shim: Docker's cgroup parent is used).
   */
  'cgroupParent'?: (string);
  'securityContext'?: (_runtime_v1_LinuxSandboxSecurityContext | null);
  'sysctls'?: ({[key: string]: string});
}

export interface LinuxPodSandboxConfig__Output {
  /**
   * Parent cgroup of the sandbox (unused by the Docker shim: Docker's cgroup parent is used).
   */
  'cgroupParent': (string);
  'securityContext': (_runtime_v1_LinuxSandboxSecurityContext__Output | null);
  'sysctls': ({[key: string]: string});
}
