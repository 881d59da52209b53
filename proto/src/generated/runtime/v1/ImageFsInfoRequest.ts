// Original file: cri.proto


export interface ImageFsInfoRequest {
}

export interface ImageFsInfoRequest__Output {
}
