/**
 * The kubelet's metrics under upstream's names (pkg/kubelet/metrics): kubelet_running_pods,
 * kubelet_running_containers{container_state}, kubelet_pod_start_duration_seconds,
 * kubelet_pleg_relist_duration_seconds, kubelet_pleg_relist_interval_seconds, kubelet_node_name,
 * served on the kubelet API's /metrics; and the cAdvisor series of /metrics/cadvisor, built per
 * scrape from the runtime's container and sandbox stats (upstream's CRI stats provider).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Pod } from '@mk8s/api';
import type { Container, ContainerStats, PodSandbox, PodSandboxStats } from '@mk8s/proto';
import { CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from './labels.js';

/** Prometheus' DefBuckets (the PLEG histograms use them). */
const DEF_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** upstream's PodStartDuration buckets. */
const POD_START_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];

/** CRI container state → the container_state label (upstream lowercases the state without its prefix). */
const STATE_LABEL: Record<Container['state'], string> = {
  CONTAINER_CREATED: 'created', CONTAINER_RUNNING: 'running', CONTAINER_EXITED: 'exited', CONTAINER_UNKNOWN: 'unknown',
};

/** What the kubelet reports; every method is synchronous and cheap (called from the PLEG and pod workers). */
export interface KubeletMetrics {
  /** After each relist, with what it listed (running pods and containers are counted from it) and how long it took. */
  observeRelist(o: { startMs: number; durationMs: number; sandboxes: readonly PodSandbox[]; containers: readonly Container[] }): void;
  /** The kubelet saw pod uid for the first time at ms (upstream: the config.seen time). Idempotent. */
  podSeen(uid: string, ms: number): void;
  /** A status was computed for uid; the first Running one observes kubelet_pod_start_duration_seconds. */
  podPhase(uid: string, phase: string | undefined, ms: number): void;
  /** The pod is gone: its first-seen time is dropped. */
  podForgotten(uid: string): void;
}

/** newKubeletMetrics registers the kubelet's families on registry. */
export function newKubeletMetrics(registry: Registry, nodeName: string): KubeletMetrics {
  const registers = [registry];
  const runningPods = new Gauge({ name: 'kubelet_running_pods', help: 'Number of pods that have a running pod sandbox', registers });
  const runningContainers = new Gauge({ name: 'kubelet_running_containers', help: 'Number of containers currently running', labelNames: ['container_state'], registers });
  const podStart = new Histogram({
    name: 'kubelet_pod_start_duration_seconds', help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run', buckets: POD_START_BUCKETS, registers,
  });
  const relist = new Histogram({ name: 'kubelet_pleg_relist_duration_seconds', help: 'Duration in seconds for relisting pods in PLEG.', buckets: DEF_BUCKETS, registers });
  const interval = new Histogram({ name: 'kubelet_pleg_relist_interval_seconds', help: 'Interval in seconds between relisting in PLEG.', buckets: DEF_BUCKETS, registers });
  new Gauge({ name: 'kubelet_node_name', help: "The node's name. The count is always 1.", labelNames: ['node'], registers }).set({ node: nodeName }, 1);
  runningPods.set(0);
  for (const s of Object.values(STATE_LABEL)) runningContainers.set({ container_state: s }, 0);
  const seen = new Map<string, number>();
  let lastStartMs: number | undefined;
  return {
    observeRelist({ startMs, durationMs, sandboxes, containers }) {
      relist.observe(durationMs / 1000);
      if (lastStartMs !== undefined) interval.observe((startMs - lastStartMs) / 1000);
      lastStartMs = startMs;
      runningPods.set(new Set(sandboxes.filter((s) => s.state === 'SANDBOX_READY').map((s) => s.labels[POD_UID_LABEL] ?? s.metadata.uid)).size);
      const counts: Record<string, number> = { created: 0, running: 0, exited: 0, unknown: 0 };
      for (const c of containers) counts[STATE_LABEL[c.state] ?? 'unknown']!++;
      for (const [state, n] of Object.entries(counts)) runningContainers.set({ container_state: state }, n);
    },
    podSeen(uid, ms) { if (!seen.has(uid)) seen.set(uid, ms); },
    podPhase(uid, phase, ms) {
      const first = seen.get(uid);
      if (phase !== 'Running' || first === undefined || first < 0) return;
      podStart.observe((ms - first) / 1000);
      seen.set(uid, -1);                                                // observed: never again for this pod
    },
    podForgotten(uid) { seen.delete(uid); },
  };
}

/** Metrics that go nowhere (tests, or a kubelet built without a registry). */
export const noopKubeletMetrics: KubeletMetrics = { observeRelist() {}, podSeen() {}, podPhase() {}, podForgotten() {} };

/** What /metrics/cadvisor is built from. */
export interface CadvisorInput {
  containers: readonly ContainerStats[];
  sandboxes: readonly PodSandboxStats[];
  /** The pods bound to this node (for each container's image). */
  pods: readonly Pod[];
}

/**
 * renderCadvisor returns the cAdvisor exposition for one scrape: per container
 * container_cpu_usage_seconds_total, container_memory_working_set_bytes, container_memory_usage_bytes,
 * container_memory_rss with labels container, id, image, name, namespace, pod; per pod (its
 * sandbox, container="") container_network_{receive,transmit}_{bytes,errors}_total by interface.
 * `id` is the runtime's container id path and `name` the runtime's name, as cAdvisor's.
 */
export async function renderCadvisor(input: CadvisorInput): Promise<string> {
  const registry = new Registry();
  const registers = [registry];
  const labelNames = ['container', 'id', 'image', 'name', 'namespace', 'pod'] as const;
  const netLabels = [...labelNames, 'interface'] as const;
  const cpu = new Counter({ name: 'container_cpu_usage_seconds_total', help: 'Cumulative cpu time consumed in seconds.', labelNames, registers });
  const ws = new Gauge({ name: 'container_memory_working_set_bytes', help: 'Current working set in bytes.', labelNames, registers });
  const usage = new Gauge({ name: 'container_memory_usage_bytes', help: 'Current memory usage in bytes, including all memory regardless of when it was accessed', labelNames, registers });
  const rss = new Gauge({ name: 'container_memory_rss', help: 'Size of RSS in bytes.', labelNames, registers });
  const rx = new Counter({ name: 'container_network_receive_bytes_total', help: 'Cumulative count of bytes received', labelNames: netLabels, registers });
  const rxErr = new Counter({ name: 'container_network_receive_errors_total', help: 'Cumulative count of errors encountered while receiving', labelNames: netLabels, registers });
  const tx = new Counter({ name: 'container_network_transmit_bytes_total', help: 'Cumulative count of bytes transmitted', labelNames: netLabels, registers });
  const txErr = new Counter({ name: 'container_network_transmit_errors_total', help: 'Cumulative count of errors encountered while transmitting', labelNames: netLabels, registers });
  const images = new Map<string, string>();
  for (const p of input.pods) for (const c of [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])]) images.set(`${p.metadata?.uid}/${c.name}`, c.image ?? '');
  for (const s of input.containers) {
    const l = s.attributes.labels;
    const container = l[CONTAINER_NAME_LABEL] ?? s.attributes.metadata.name;
    const labels = {
      container, id: `/${s.attributes.id}`, image: images.get(`${l[POD_UID_LABEL] ?? ''}/${container}`) ?? '',
      name: s.attributes.id.slice(0, 12), namespace: l[POD_NAMESPACE_LABEL] ?? '', pod: l[POD_NAME_LABEL] ?? '',
    };
    const cpuNs = s.cpu?.usageCoreNanoSeconds?.value;
    if (cpuNs !== undefined) cpu.inc(labels, cpuNs / 1e9);
    if (s.memory?.workingSetBytes) ws.set(labels, s.memory.workingSetBytes.value);
    if (s.memory?.usageBytes) usage.set(labels, s.memory.usageBytes.value);
    if (s.memory?.rssBytes) rss.set(labels, s.memory.rssBytes.value);
  }
  for (const s of input.sandboxes) {
    const l = s.attributes.labels;
    const base = {
      container: '', id: `/${s.attributes.id}`, image: '', name: s.attributes.id.slice(0, 12),
      namespace: l[POD_NAMESPACE_LABEL] ?? s.attributes.metadata.namespace, pod: l[POD_NAME_LABEL] ?? s.attributes.metadata.name,
    };
    for (const i of s.linux?.network?.interfaces ?? []) {
      const labels = { ...base, interface: i.name };
      rx.inc(labels, i.rxBytes?.value ?? 0); rxErr.inc(labels, i.rxErrors?.value ?? 0);
      tx.inc(labels, i.txBytes?.value ?? 0); txErr.inc(labels, i.txErrors?.value ?? 0);
    }
  }
  return registry.metrics();
}
