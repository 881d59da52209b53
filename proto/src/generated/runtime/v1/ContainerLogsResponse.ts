// Original file: cri.proto


export interface ContainerLogsResponse {
  /**
   * "stdout" or "stderr".
   */
  'stream'?: (string);
  'data'?: (Buffer | Uint8Array | string);
}

export interface ContainerLogsResponse__Output {
  /**
   * "stdout" or "stderr".
   */
  'stream': (string);
  'data': (Buffer);
}
