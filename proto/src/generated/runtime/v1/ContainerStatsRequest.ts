// Original file: cri.proto


export interface ContainerStatsRequest {
  'containerId'?: (string);
}

export interface ContainerStatsRequest__Output {
  'containerId': (string);
}
