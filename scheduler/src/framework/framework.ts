/**
 * The framework runtime (framework/runtime/framework.go): instantiates a profile's plugins by name
 * and runs each extension point over them in order.
 */
import type {
  BindPlugin, PreBindPlugin, FrameworkRunner, Handle, NodeScore, Plugin, PluginFactory, PostFilterPlugin, PostFilterResult,
  PreFilterPlugin, PreScorePlugin, QueueSortPlugin, ReservePlugin, ScorePlugin, FilterPlugin,
} from './interfaces.js';
import { Status } from './status.js';
import { CycleState, NodeInfo, PodInfo, podKey, podPriority, type Pod } from './types.js';

/** Extension points, as KubeSchedulerConfiguration's `plugins` names them. */
export type ExtensionPoint = 'queueSort' | 'preFilter' | 'filter' | 'postFilter' | 'preScore' | 'score' | 'reserve' | 'preBind' | 'bind';

/** One enabled plugin of a profile; weight applies to its Score (default 1). */
export interface PluginSpec {
  name: string;
  weight?: number;
  /** Extension points where this plugin stays off although it implements them. */
  disabled?: readonly ExtensionPoint[];
}

/** A scheduling profile (KubeSchedulerProfile). */
export interface ProfileConfig {
  /** Pods with spec.schedulerName equal to this are ours. @default 'default-scheduler' */
  schedulerName?: string;
  /** Enabled plugins in order (multiPoint): each runs at every extension point it implements. */
  plugins?: PluginSpec[];
  /** Per-plugin args by plugin name. */
  pluginConfig?: Record<string, Record<string, unknown>>;
  /** 0 = adaptive, as upstream. */
  percentageOfNodesToScore?: number;
}

/** Upstream's default profile (v1.32) minus VolumeRestrictions, NodeVolumeLimits, VolumeZone and ImageLocality. */
export const DEFAULT_PLUGINS: readonly PluginSpec[] = [
  { name: 'PrioritySort' },
  { name: 'NodeUnschedulable' },
  { name: 'NodeName' },
  { name: 'TaintToleration', weight: 3 },
  { name: 'NodeAffinity', weight: 2 },
  { name: 'NodePorts' },
  { name: 'NodeResourcesFit', weight: 1 },
  { name: 'VolumeBinding' },
  { name: 'PodTopologySpread', weight: 2 },
  { name: 'InterPodAffinity', weight: 2 },
  { name: 'DefaultPreemption' },
  { name: 'NodeResourcesBalancedAllocation', weight: 1 },
  { name: 'DefaultBinder' },
];
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/** The (shared, never mutated) result of a node passing every filter. */
const FILTER_SUCCESS: { status: Status | undefined; plugin: string | undefined } = Object.freeze({ status: undefined, plugin: undefined });

const has = <K extends string>(p: Plugin, m: K): boolean => typeof (p as unknown as Record<string, unknown>)[m] === 'function';

export interface FrameworkOptions {
  registry: Readonly<Record<string, PluginFactory>>;
  profile?: ProfileConfig;
  handle: Omit<Handle, 'framework'>;
}

export class Framework implements FrameworkRunner {
  readonly schedulerName: string;
  readonly percentageOfNodesToScore: number;
  readonly plugins: Plugin[];
  readonly queueSort: QueueSortPlugin | undefined;
  readonly preFilter: PreFilterPlugin[];
  readonly filter: FilterPlugin[];
  readonly postFilter: PostFilterPlugin[];
  readonly preScore: PreScorePlugin[];
  readonly scorePlugins: { plugin: ScorePlugin; weight: number }[];
  readonly reservePlugins: ReservePlugin[];
  readonly preBindPlugins: PreBindPlugin[];
  readonly bindPlugins: BindPlugin[];
  readonly handle: Handle;

  constructor(o: FrameworkOptions) {
    const profile = o.profile ?? {};
    this.schedulerName = profile.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.percentageOfNodesToScore = profile.percentageOfNodesToScore ?? 0;
    this.handle = { ...o.handle, framework: () => this };
    const specs = profile.plugins ?? DEFAULT_PLUGINS;
    this.plugins = specs.map((s) => {
      const f = o.registry[s.name];
      if (!f) throw new Error(`plugin "${s.name}" is not registered`);
      return f(profile.pluginConfig?.[s.name], this.handle);
    });
    const weight = new Map(specs.map((sp) => [sp.name, sp.weight ?? 1]));
    const off = new Map(specs.map((sp) => [sp.name, new Set(sp.disabled ?? [])]));
    const at = <T extends Plugin>(point: ExtensionPoint, method: string): T[] =>
      this.plugins.filter((p) => has(p, method) && !off.get(p.name)?.has(point)) as T[];
    this.queueSort = at<QueueSortPlugin>('queueSort', 'less')[0];
    this.preFilter = at<PreFilterPlugin>('preFilter', 'preFilter');
    this.filter = at<FilterPlugin>('filter', 'filter');
    this.postFilter = at<PostFilterPlugin>('postFilter', 'postFilter');
    this.preScore = at<PreScorePlugin>('preScore', 'preScore');
    this.scorePlugins = at<ScorePlugin>('score', 'score').map((plugin) => ({ plugin, weight: weight.get(plugin.name) ?? 1 }));
    this.reservePlugins = at<ReservePlugin>('reserve', 'reserve');
    this.preBindPlugins = at<PreBindPlugin>('preBind', 'preBind');
    this.bindPlugins = at<BindPlugin>('bind', 'bind');
  }

  /** Runs PreFilter plugins in order; the first rejection or error stops the cycle. */
  runPreFilterPlugins(state: CycleState, pod: Pod): { status: Status | undefined; plugin: string | undefined } {
    for (const p of this.preFilter) {
      let s: Status | undefined;
      try { s = p.preFilter(state, pod); } catch (err) { s = Status.error(err); }
      if (!s || s.code === 'Success') continue;
      if (s.code === 'Skip') { state.skipFilterPlugins.add(p.name); continue; }
      return { status: s, plugin: p.name };
    }
    return { status: undefined, plugin: undefined };
  }

  /** Runs Filter plugins on one node; the first non-success is returned with its plugin's name. */
  runFilterPlugins(state: CycleState, pod: Pod, nodeInfo: NodeInfo): { status: Status | undefined; plugin: string | undefined } {
    // The plugins not skipped by PreFilter, worked out once per cycle: this runs for hundreds of nodes.
    let active = state.activeFilterPlugins as FilterPlugin[] | undefined;
    if (!active || state.activeFilterPluginsFor !== state.skipFilterPlugins.size) {
      active = this.filter.filter((p) => !state.skipFilterPlugins.has(p.name));
      state.activeFilterPlugins = active;
      state.activeFilterPluginsFor = state.skipFilterPlugins.size;
    }
    for (const p of active) {
      let s: Status | undefined;
      try { s = p.filter(state, pod, nodeInfo); } catch (err) { s = Status.error(err); }
      if (s && s.code !== 'Success') return { status: s, plugin: p.name };
    }
    return FILTER_SUCCESS;
  }

  /**
   * Filters with the node's nominated pods of equal or higher priority counted as if they ran there,
   * then without them (framework.RunFilterPluginsWithNominatedPods): the pod must fit both ways so it
   * neither steals room made for a preemptor nor depends on a nominated pod that may never come.
   */
  runFilterPluginsWithNominatedPods(state: CycleState, pod: Pod, nodeInfo: NodeInfo): { status: Status | undefined; plugin: string | undefined } {
    const all = this.handle.nominator.nominatedPodsForNode(nodeInfo.name);
    if (all.length === 0) return this.runFilterPlugins(state, pod, nodeInfo);
    const key = podKey(pod);
    const prio = podPriority(pod);
    const nominated = all.filter((p) => podKey(p) !== key && podPriority(p) >= prio);
    if (nominated.length) {
      const withNominated = nodeInfo.clone();
      for (const p of nominated) withNominated.addPod(PodInfo.of(p));
      const r = this.runFilterPlugins(state, pod, withNominated);
      if (r.status) return r;
    }
    return this.runFilterPlugins(state, pod, nodeInfo);
  }

  /** Runs PostFilter plugins until one succeeds; otherwise returns the joined rejection messages. */
  async runPostFilterPlugins(state: CycleState, pod: Pod, nodeStatuses: ReadonlyMap<string, Status>, signal: AbortSignal):
    Promise<{ result: PostFilterResult | undefined; status: Status | undefined }> {
    const reasons: string[] = [];
    let result: PostFilterResult | undefined;
    for (const p of this.postFilter) {
      const r = await p.postFilter(state, pod, nodeStatuses, signal);
      if (!r.status || r.status.code === 'Success') return { result: r.result, status: undefined };
      if (r.status.code === 'Error') return { result: r.result, status: r.status };
      if (r.result) result = r.result;
      reasons.push(...r.status.reasons);
    }
    return { result, status: reasons.length ? Status.unschedulable(...reasons) : undefined };
  }

  runPreScorePlugins(state: CycleState, pod: Pod, nodes: NodeInfo[]): Status | undefined {
    for (const p of this.preScore) {
      const s = p.preScore(state, pod, nodes);
      if (!s || s.code === 'Success') continue;
      if (s.code === 'Skip') { state.skipScorePlugins.add(p.name); continue; }
      return s;
    }
    return undefined;
  }

  /** Scores every node with every Score plugin, normalizes, weights and sums. */
  runScorePlugins(state: CycleState, pod: Pod, nodes: NodeInfo[]): NodeScore[] {
    const total: NodeScore[] = nodes.map((n) => ({ name: n.name, score: 0 }));
    for (const { plugin, weight } of this.scorePlugins) {
      if (state.skipScorePlugins.has(plugin.name)) continue;
      const scores: NodeScore[] = nodes.map((n) => ({ name: n.name, score: plugin.score(state, pod, n) }));
      plugin.normalizeScore?.(state, pod, scores);
      for (let i = 0; i < scores.length; i++) {
        const s = scores[i]!.score;
        if (s > 100 || s < 0) throw new Error(`plugin "${plugin.name}" returns an invalid score ${s}, it should in the range of [0, 100] after normalizing`);
        total[i]!.score += s * weight;
      }
    }
    return total;
  }

  runReservePluginsReserve(state: CycleState, pod: Pod, nodeName: string): Status | undefined {
    for (const p of this.reservePlugins) {
      const s = p.reserve(state, pod, nodeName);
      if (s && s.code !== 'Success') return s;
    }
    return undefined;
  }

  runReservePluginsUnreserve(state: CycleState, pod: Pod, nodeName: string): void {
    for (const p of [...this.reservePlugins].reverse()) p.unreserve(state, pod, nodeName);
  }

  /** Runs PreBind plugins in order; the first non-success stops the binding. */
  async runPreBindPlugins(state: CycleState, pod: Pod, nodeName: string, signal: AbortSignal): Promise<Status | undefined> {
    for (const p of this.preBindPlugins) {
      const s = await p.preBind(state, pod, nodeName, signal);
      if (s && s.code !== 'Success') return s;
    }
    return undefined;
  }

  async runBindPlugins(state: CycleState, pod: Pod, nodeName: string, signal: AbortSignal): Promise<Status | undefined> {
    for (const p of this.bindPlugins) {
      const s = await p.bind(state, pod, nodeName, signal);
      if (s?.code === 'Skip') continue;
      return s;
    }
    return Status.error(new Error('no bind plugin bound the pod'));
  }
}
