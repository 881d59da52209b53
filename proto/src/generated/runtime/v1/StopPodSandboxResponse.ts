// Original file: cri.proto


export interface StopPodSandboxResponse {
}

export interface StopPodSandboxResponse__Output {
}
