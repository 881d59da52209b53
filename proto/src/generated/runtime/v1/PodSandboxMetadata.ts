// Original file: cri.proto


/**
 * PodSandboxMetadata identifies a sandbox; (name, namespace, uid, attempt) is unique per node.
 */
export interface PodSandboxMetadata {
  'name'?: (string);
  'uid'?: (string);
  'namespace'?: (string);
  'attempt'?: (number);
}

/**
 * PodSandboxMetadata identifies a sandbox; (name, namespace, uid, attempt) is unique per node.
 */
export interface PodSandboxMetadata__Output {
  'name': (string);
  'uid': (string);
  'namespace': (string);
  'attempt': (number);
}
