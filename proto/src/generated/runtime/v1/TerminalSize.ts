// Original file: cri.proto


export interface TerminalSize {
  'width'?: (number);
  'height'?: (number);
}

export interface TerminalSize__Output {
  'width': (number);
  'height': (number);
}
