// Original file: cri.proto


export interface RemoveContainerResponse {
}

export interface RemoveContainerResponse__Output {
}
