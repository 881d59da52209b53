/**
 * The CRI labels and annotations the kubelet puts on sandboxes and containers (upstream
 * kuberuntime `labels.go`). Everything the kubelet needs after a restart (which pod, which
 * container, how often it restarted, which spec it came from) is read back from these.
 */
export const POD_NAME_LABEL = 'io.kubernetes.pod.name';
export const POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';
export const CONTAINER_TYPE_LABEL = 'io.kubernetes.container.type';

export const RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';
export const HASH_ANNOTATION = 'io.kubernetes.container.hash';
export const GRACE_ANNOTATION = 'io.kubernetes.pod.terminationGracePeriod';
export const PRESTOP_ANNOTATION = 'io.kubernetes.container.preStopHandler';
export const TERMINATION_MESSAGE_PATH_ANNOTATION = 'io.kubernetes.container.terminationMessagePath';

/** The kubelet's version as it reports it in nodeInfo. */
export const KUBELET_VERSION = 'v1.32.0-mk8s';
