/**
 * KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) → what createScheduler takes. The
 * first profile is used; plugins are enabled/disabled by name on top of the default set, per
 * extension point or multiPoint, with score weights and pluginConfig args, as upstream merges them.
 */
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { DEFAULT_PLUGINS, type ExtensionPoint, type PluginSpec, type ProfileConfig } from './framework/framework.js';
import type { SchedulerConfig } from './create-scheduler.js';

interface PluginRef { name: string; weight?: number }
interface PluginSet { enabled?: PluginRef[]; disabled?: { name: string }[] }
interface Profile {
  schedulerName?: string;
  percentageOfNodesToScore?: number;
  plugins?: Partial<Record<ExtensionPoint | 'multiPoint', PluginSet>>;
  pluginConfig?: { name: string; args?: Record<string, unknown> }[];
}
export interface KubeSchedulerConfiguration {
  apiVersion?: string;
  kind?: string;
  clientConnection?: { kubeconfig?: string; qps?: number; burst?: number };
  leaderElection?: { leaderElect?: boolean; leaseDuration?: string; renewDeadline?: string; retryPeriod?: string; resourceNamespace?: string; resourceName?: string };
  percentageOfNodesToScore?: number;
  podInitialBackoffSeconds?: number;
  podMaxBackoffSeconds?: number;
  profiles?: Profile[];
}

const POINTS: readonly ExtensionPoint[] = ['queueSort', 'preFilter', 'filter', 'postFilter', 'preScore', 'score', 'reserve', 'preBind', 'bind'];

/** Go duration ('15s', '1m30s', '500ms') → ms. */
export function parseDurationMs(d: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0; let matched = '';
  for (let m = re.exec(d); m; m = re.exec(d)) {
    matched += m[0];
    total += Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h']);
  }
  if (!d || matched !== d) throw new Error(`invalid duration "${d}"`);
  return total;
}

/** Merges a profile's plugin sets over the defaults (multiPoint first, then per point). */
export function profileFromConfig(p: Profile, globalPercentage?: number): ProfileConfig {
  let specs: PluginSpec[] = DEFAULT_PLUGINS.map((s) => ({ ...s }));
  const mp = p.plugins?.multiPoint;
  if (mp?.disabled?.some((d) => d.name === '*')) specs = [];
  else for (const d of mp?.disabled ?? []) specs = specs.filter((s) => s.name !== d.name);
  for (const e of mp?.enabled ?? []) {
    const cur = specs.find((s) => s.name === e.name);
    if (cur) { if (e.weight !== undefined) cur.weight = e.weight; } else specs.push({ name: e.name, ...(e.weight !== undefined ? { weight: e.weight } : {}) });
  }
  for (const point of POINTS) {
    const set = p.plugins?.[point];
    if (!set) continue;
    const all = set.disabled?.some((d) => d.name === '*');
    for (const s of specs) {
      if (all || set.disabled?.some((d) => d.name === s.name)) s.disabled = [...(s.disabled ?? []), point];
    }
    for (const e of set.enabled ?? []) {
      const cur = specs.find((s) => s.name === e.name);
      if (cur) {
        cur.disabled = (cur.disabled ?? []).filter((x) => x !== point);
        if (point === 'score' && e.weight !== undefined) cur.weight = e.weight;
      } else {
        // Enabled at one point only: off everywhere else.
        specs.push({ name: e.name, ...(e.weight !== undefined ? { weight: e.weight } : {}), disabled: POINTS.filter((x) => x !== point) });
      }
    }
  }
  const pluginConfig: Record<string, Record<string, unknown>> = {};
  for (const c of p.pluginConfig ?? []) if (c.args) pluginConfig[c.name] = c.args;
  const pct = p.percentageOfNodesToScore ?? globalPercentage;
  return {
    ...(p.schedulerName ? { schedulerName: p.schedulerName } : {}),
    plugins: specs,
    pluginConfig,
    ...(pct !== undefined ? { percentageOfNodesToScore: pct } : {}),
  };
}

/** Parses a KubeSchedulerConfiguration document into SchedulerConfig fields. */
export function schedulerConfigFromYaml(text: string): Partial<SchedulerConfig> {
  const c = (yaml.load(text) ?? {}) as KubeSchedulerConfiguration;
  if (c.kind && c.kind !== 'KubeSchedulerConfiguration') throw new Error(`unexpected kind ${c.kind}, want KubeSchedulerConfiguration`);
  const out: Partial<SchedulerConfig> = {};
  if (c.clientConnection?.kubeconfig) out.kubeconfig = c.clientConnection.kubeconfig;
  if (c.clientConnection?.qps !== undefined) out.qps = c.clientConnection.qps;
  if (c.clientConnection?.burst !== undefined) out.burst = c.clientConnection.burst;
  const le = c.leaderElection;
  if (le?.leaderElect !== undefined) out.leaderElect = le.leaderElect;
  if (le) {
    out.leaderElection = {
      ...(le.leaseDuration ? { leaseDurationMs: parseDurationMs(le.leaseDuration) } : {}),
      ...(le.renewDeadline ? { renewDeadlineMs: parseDurationMs(le.renewDeadline) } : {}),
      ...(le.retryPeriod ? { retryPeriodMs: parseDurationMs(le.retryPeriod) } : {}),
      ...(le.resourceNamespace ? { namespace: le.resourceNamespace } : {}),
      ...(le.resourceName ? { name: le.resourceName } : {}),
    };
  }
  if (c.podInitialBackoffSeconds !== undefined) out.podInitialBackoffMs = c.podInitialBackoffSeconds * 1000;
  if (c.podMaxBackoffSeconds !== undefined) out.podMaxBackoffMs = c.podMaxBackoffSeconds * 1000;
  const profiles = c.profiles ?? [{}];
  out.profile = profileFromConfig(profiles[0] ?? {}, c.percentageOfNodesToScore);
  return out;
}

export function loadSchedulerConfig(path: string): Partial<SchedulerConfig> {
  return schedulerConfigFromYaml(readFileSync(path, 'utf8'));
}
