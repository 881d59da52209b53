// Original file: cri.proto


export interface RemoveImageResponse {
}

export interface RemoveImageResponse__Output {
}
