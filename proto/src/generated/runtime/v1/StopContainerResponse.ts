// Original file: cri.proto


export interface StopContainerResponse {
}

export interface StopContainerResponse__Output {
}
