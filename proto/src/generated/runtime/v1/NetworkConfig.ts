// Original file: cri.proto


export interface NetworkConfig {
  'podCidr'?: (string);
}

export interface NetworkConfig__Output {
  'podCidr': (string);
}
