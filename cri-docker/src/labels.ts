/**
 * Docker labels that carry all CRI state, as cri-dockerd sets them, plus `io.mk8s.node` so several
 * shims can share one dockerd. Everything the shim reports is rebuilt from these after a restart.
 */
export const NODE_LABEL = 'io.mk8s.node';
export const TYPE_LABEL = 'io.kubernetes.docker.type';
export const POD_NAME_LABEL = 'io.kubernetes.pod.name';
export const POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';
export const SANDBOX_ID_LABEL = 'io.kubernetes.sandbox.id';
export const SANDBOX_ATTEMPT_LABEL = 'io.kubernetes.sandbox.attempt';
export const CONTAINER_ATTEMPT_LABEL = 'io.kubernetes.container.attempt';
/** The image as the kubelet asked for it (Docker keeps only what it resolved). */
export const IMAGE_LABEL = 'io.mk8s.image';
export const LOG_PATH_LABEL = 'io.mk8s.log-path';
export const RUNTIME_HANDLER_LABEL = 'io.mk8s.runtime-handler';
/** Sandbox network mode: 'cni', 'none' or 'host'. */
export const NETWORK_LABEL = 'io.mk8s.network';
/** CRI annotations are stored as labels with this prefix (cri-dockerd). */
export const ANNOTATION_PREFIX = 'annotation.';

export const TYPE_SANDBOX = 'podsandbox';
export const TYPE_CONTAINER = 'container';
/** The container name of every sandbox (kubelet's "POD" infra container). */
export const SANDBOX_CONTAINER_NAME = 'POD';

const INTERNAL = new Set([
  NODE_LABEL, TYPE_LABEL, SANDBOX_ID_LABEL, SANDBOX_ATTEMPT_LABEL, CONTAINER_ATTEMPT_LABEL, IMAGE_LABEL, LOG_PATH_LABEL,
  RUNTIME_HANDLER_LABEL, NETWORK_LABEL,
]);

/** toDockerLabels merges CRI labels, CRI annotations (prefixed) and the shim's own labels. */
export function toDockerLabels(labels: Record<string, string> | undefined, annotations: Record<string, string> | undefined, own: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...labels };
  for (const [k, v] of Object.entries(annotations ?? {})) out[ANNOTATION_PREFIX + k] = v;
  return { ...out, ...own };
}

/** fromDockerLabels splits Docker labels back into CRI labels and annotations. */
export function fromDockerLabels(docker: Record<string, string> | undefined): { labels: Record<string, string>; annotations: Record<string, string> } {
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(docker ?? {})) {
    if (k.startsWith(ANNOTATION_PREFIX)) annotations[k.slice(ANNOTATION_PREFIX.length)] = v;
    else if (!INTERNAL.has(k)) labels[k] = v;
  }
  return { labels, annotations };
}

/** Docker's container name for a sandbox or container (cri-dockerd's k8s_ naming). */
export function dockerName(containerName: string, podName: string, namespace: string, uid: string, attempt: number): string {
  return ['k8s', containerName, podName, namespace, uid, String(attempt)].join('_').replace(/[^a-zA-Z0-9_.-]/g, '-');
}

/** parseDockerTime converts Docker's RFC3339Nano time to CRI nanoseconds (0 for Go's zero time). */
export function parseDockerTime(s: string | undefined): number {
  if (!s || s.startsWith('0001-01-01')) return 0;
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return 0;
  const frac = /\.(\d+)/.exec(s)?.[1] ?? '';
  const subMs = Number(frac.padEnd(9, '0').slice(3, 9));
  return ms * 1e6 + subMs;
}

/** matchesSelector: every key/value of selector is in labels. */
export const matchesSelector = (labels: Record<string, string>, selector: Record<string, string> | undefined): boolean =>
  Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
