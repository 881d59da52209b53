// Original file: cri.proto


/**
 * DNSConfig specifies the DNS servers and search domains of a sandbox.
 */
export interface DNSConfig {
  'servers'?: (string)[];
  'searches'?: (string)[];
  'options'?: (string)[];
}

/**
 * DNSConfig specifies the DNS servers and search domains of a sandbox.
 */
export interface DNSConfig__Output {
  'servers': (string)[];
  'searches': (string)[];
  'options': (string)[];
}
