// Original file: cri.proto


export interface ExecExit {
  'exitCode'?: (number);
}

export interface ExecExit__Output {
  'exitCode': (number);
}
