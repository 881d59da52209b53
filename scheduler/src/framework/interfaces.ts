/**
 * Plugin contracts, one small interface per extension point (kube-scheduler framework/interface.go).
 * A plugin implements any subset. The scheduling cycle runs on one pod at a time, so plugins are
 * never called concurrently within a profile; Bind alone runs asynchronously, once per pod.
 */
import type { Logger } from '@mk8s/component-base';
import type { Clock } from '@mk8s/component-base';
import type { Clientset } from '@mk8s/client';
import type { PV, PVC, ReplicaSet, Service, StorageClass } from '@mk8s/api';
import type { Status } from './status.js';
import type { CycleState, NamespaceLabels, NodeInfo, Pod } from './types.js';

export const MAX_NODE_SCORE = 100;
export const MIN_NODE_SCORE = 0;

export interface Plugin { readonly name: string }

/** The queue's order: less(a, b) is true if a must be scheduled before b. */
export interface QueueSortPlugin extends Plugin {
  less(a: QueuedPodInfo, b: QueuedPodInfo): boolean;
}

/**
 * Runs once per cycle before Filter; computes state for Filter from the whole snapshot. A rejected
 * Status fails the pod on every node; Skip disables this plugin's Filter for the cycle.
 */
export interface PreFilterPlugin extends Plugin {
  preFilter(state: CycleState, pod: Pod): Status | undefined;
}

/**
 * Decides whether pod may run on one node. Pure: reads state and nodeInfo only, so it may be called
 * for any node, many times (preemption dry runs call it on modified copies). undefined = fits.
 */
export interface FilterPlugin extends Plugin {
  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined;
}

export interface PostFilterResult {
  /** '' clears a previous nomination; undefined leaves it. */
  nominatedNodeName?: string;
  /** How many pods were preempted (for metrics). */
  victims?: number;
}

/**
 * Runs when no node fits (preemption). nodeStatuses holds each node's filter failure. A success
 * with a nominatedNodeName means room is being made there; a rejected Status's message is appended
 * to the FailedScheduling message.
 */
export interface PostFilterPlugin extends Plugin {
  postFilter(state: CycleState, pod: Pod, nodeStatuses: ReadonlyMap<string, Status>, signal: AbortSignal):
    Promise<{ result?: PostFilterResult; status?: Status }>;
}

/** Runs once before Score over the feasible nodes; Skip disables this plugin's Score for the cycle. */
export interface PreScorePlugin extends Plugin {
  preScore(state: CycleState, pod: Pod, nodes: NodeInfo[]): Status | undefined;
}

export interface NodeScore { name: string; score: number }

/**
 * Ranks a feasible node. score returns a raw number; normalizeScore (if present) maps all raw
 * scores into [0, MAX_NODE_SCORE] in place. The framework multiplies by the plugin's weight.
 * Throwing is an internal error for the pod.
 */
export interface ScorePlugin extends Plugin {
  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number;
  normalizeScore?(state: CycleState, pod: Pod, scores: NodeScore[]): void;
}

/** Reserve runs once the node is chosen (after the pod is assumed); Unreserve undoes it on a later failure. Both idempotent. */
export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, pod: Pod, nodeName: string): Status | undefined;
  unreserve(state: CycleState, pod: Pod, nodeName: string): void;
}

/**
 * Runs before Bind, off the scheduling cycle (volume binding writes and waits here). A non-success
 * Status fails the binding: the pod is unreserved and retried.
 */
export interface PreBindPlugin extends Plugin {
  preBind(state: CycleState, pod: Pod, nodeName: string, signal: AbortSignal): Promise<Status | undefined>;
}

/** Writes the decision. Returns Skip to let the next binder try; runs off the scheduling cycle. */
export interface BindPlugin extends Plugin {
  bind(state: CycleState, pod: Pod, nodeName: string, signal: AbortSignal): Promise<Status | undefined>;
}

/** A pod in the scheduling queue with its bookkeeping (framework.QueuedPodInfo). */
export interface QueuedPodInfo {
  pod: Pod;
  /** When it was last added to the queue (activeQ order tie-break). */
  timestamp: number;
  /** Scheduling attempts so far. */
  attempts: number;
  initialAttemptTimestamp: number | undefined;
  /** Plugins that rejected it in its last attempt; decides which cluster events can help. */
  unschedulablePlugins: Set<string>;
}

/** Nominated pods: pods that preempted others and wait for room on a node (framework.PodNominator). */
export interface PodNominator {
  /** Pods nominated to nodeName (not including the caller's own pod). */
  nominatedPodsForNode(nodeName: string): Pod[];
}

/** What the scheduler lends plugins: clients, listers, and the running framework. */
export interface Handle {
  readonly logger: Logger;
  readonly clock: Clock;
  /** Unset in pure unit tests; plugins that write (binder, preemption) need it. */
  readonly client: Clientset | undefined;
  readonly namespaceLabels: NamespaceLabels;
  /** For default topology spreading: the services and replicasets selecting a pod. */
  readonly services: (namespace: string) => Service[];
  readonly replicaSets: (namespace: string) => ReplicaSet[];
  readonly nominator: PodNominator;
  /** The storage objects VolumeBinding reads (informer caches). Absent: the plugin stays off. */
  readonly volumes?: VolumeListers;
  /** Records an Event about obj (core/v1). */
  readonly recordEvent: (obj: Pod, type: 'Normal' | 'Warning', reason: string, action: string, message: string) => void;
  /** The framework the plugin runs in (preemption runs its filters). Set once built. */
  framework(): FrameworkRunner;
}

/** Read-only views of the claim, volume and class caches. Objects are shared: never mutate them. */
export interface VolumeListers {
  claim(namespace: string, name: string): PVC | undefined;
  volume(name: string): PV | undefined;
  volumes(): PV[];
  storageClass(name: string): StorageClass | undefined;
  /**
   * Calls fn after any claim or volume in the caches was added or changed (VolumeBinding's PreBind
   * waits on it instead of polling). Returns the unsubscribe function. Optional: without it
   * PreBind re-checks on a timer.
   */
  onChange?(fn: () => void): () => void;
}

/** The parts of the framework plugins may call back into. */
export interface FrameworkRunner {
  runPreFilterPlugins(state: CycleState, pod: Pod): { status: Status | undefined; plugin: string | undefined };
  runFilterPlugins(state: CycleState, pod: Pod, nodeInfo: NodeInfo): { status: Status | undefined; plugin: string | undefined };
  runFilterPluginsWithNominatedPods(state: CycleState, pod: Pod, nodeInfo: NodeInfo): { status: Status | undefined; plugin: string | undefined };
  readonly schedulerName: string;
}

/** Creates a plugin; args come from the profile's pluginConfig. */
export type PluginFactory = (args: Record<string, unknown> | undefined, handle: Handle) => Plugin;
