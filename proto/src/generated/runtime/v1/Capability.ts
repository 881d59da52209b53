// Original file: cri.proto


export interface Capability {
  'addCapabilities'?: (string)[];
  'dropCapabilities'?: (string)[];
}

export interface Capability__Output {
  'addCapabilities': (string)[];
  'dropCapabilities': (string)[];
}
