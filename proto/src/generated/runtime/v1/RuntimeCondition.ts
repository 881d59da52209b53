// Original file: cri.proto


export interface RuntimeCondition {
  /**
   * "RuntimeReady" or "NetworkReady".
   */
  'type'?: (string);
  'status'?: (boolean);
  'reason'?: (string);
  'message'?: (string);
}

export interface RuntimeCondition__Output {
  /**
   * "RuntimeReady" or "NetworkReady".
   */
  'type': (string);
  'status': (boolean);
  'reason': (string);
  'message': (string);
}
