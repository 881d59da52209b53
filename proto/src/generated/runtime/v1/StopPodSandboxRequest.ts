// Original file: cri.proto


export interface StopPodSandboxRequest {
  'podSandboxId'?: (string);
}

export interface StopPodSandboxRequest__Output {
  'podSandboxId': (string);
}
