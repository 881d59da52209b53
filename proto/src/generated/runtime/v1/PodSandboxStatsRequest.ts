// Original file: cri.proto


export interface PodSandboxStatsRequest {
  'podSandboxId'?: (string);
}

export interface PodSandboxStatsRequest__Output {
  'podSandboxId': (string);
}
