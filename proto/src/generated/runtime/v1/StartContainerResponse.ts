// Original file: cri.proto


export interface StartContainerResponse {
}

export interface StartContainerResponse__Output {
}
