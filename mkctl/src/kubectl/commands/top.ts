/**
 * `top node|pod`: resource usage from metrics.k8s.io/v1beta1, printed as kubectl 1.32's
 * pkg/cmd/top and pkg/metricsutil/metrics_printer.go do: CPU as `MilliValue()` (rounded up) with
 * `m`, memory as `Value()/Mi` with `Mi`, node percentages against `status.allocatable`
 * (`--show-capacity`: capacity), nodes without metrics as `<unknown>`, sorting by name (pods by
 * namespace then name) unless `--sort-by cpu|memory` (descending). The table functions are pure.
 */
import type { Command } from 'commander';
import { ApiError, Nodes, Pods, parseQuantityExact, translateTimestampSince, type KubeObject } from '@mk8s/api';
import { CliError, type CliContext } from '../context.js';
import { tabwrite } from '../printers/tabwriter.js';

export interface Usage { cpu?: string; memory?: string }
export interface NodeMetrics { metadata: { name: string }; usage: Usage }
export interface PodMetrics { metadata: { name: string; namespace?: string }; containers: { name: string; usage: Usage }[] }

export const NODE_COLUMNS = ['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)'];
export const POD_COLUMNS = ['NAME', 'CPU(cores)', 'MEMORY(bytes)'];
/** kubectl's metricsCreationDelay: a pod younger than this without metrics is "not available yet". */
const METRICS_CREATION_DELAY_MS = 2 * 60_000;

/** Exact quantity as [numerator, denominator]; '' or missing is 0. */
const q = (s: string | undefined): { num: bigint; den: bigint } => (s ? parseQuantityExact(s) : { num: 0n, den: 1n });
const ceilDiv = (a: bigint, b: bigint) => (a >= 0n ? (a + b - 1n) / b : a / b);
/** Quantity.MilliValue(): rounded up. */
export const milliValue = (s: string | undefined): bigint => { const x = q(s); return ceilDiv(x.num * 1000n, x.den); };
/** Quantity.Value(): rounded up. */
export const value = (s: string | undefined): bigint => { const x = q(s); return ceilDiv(x.num, x.den); };

function sum(list: readonly (string | undefined)[]): string {
  // exact sum as a fraction, printed back as a quantity of nanounits (enough for cpu and bytes)
  let num = 0n, den = 1n;
  for (const s of list) { const x = q(s); num = num * x.den + x.num * den; den *= x.den; }
  return `${ceilDiv(num * 1_000_000_000n, den)}n`;
}

const cell = (v: string | bigint) => `${v}\t`;
function usageCells(u: Usage, available?: Usage): string {
  let s = '';
  for (const res of ['cpu', 'memory'] as const) {
    const quantity = u[res];
    s += res === 'cpu' ? cell(`${milliValue(quantity)}m`) : cell(`${value(quantity) / (1024n * 1024n)}Mi`);
    const avail = available?.[res];
    if (available && avail !== undefined) {
      const fraction = (Number(milliValue(quantity)) / Number(milliValue(avail))) * 100;
      s += cell(`${Math.trunc(Number.isFinite(fraction) ? fraction : 0)}%`);
    }
  }
  return s;
}

export type SortBy = '' | 'cpu' | 'memory';
export function checkSortBy(s: string | undefined): SortBy {
  if (!s) return '';
  if (s === 'cpu' || s === 'memory') return s;
  throw new CliError('error: --sort-by accepts only cpu or memory');
}

const byCpuOrMemory = (sortBy: SortBy, a: Usage, b: Usage): number => {
  const d = sortBy === 'cpu' ? milliValue(b.cpu) - milliValue(a.cpu) : value(b.memory) - value(a.memory);
  return d > 0n ? 1 : d < 0n ? -1 : 0;
};
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** kubectl top node's table (before tabwriting): one line per node with metrics, then `<unknown>` lines for the others. */
export function nodeMetricsLines(metrics: readonly NodeMetrics[], available: ReadonlyMap<string, Usage>, o: { noHeaders?: boolean; sortBy?: SortBy } = {}): string {
  if (metrics.length === 0) return '';
  const sorted = [...metrics].sort((a, b) => (o.sortBy ? byCpuOrMemory(o.sortBy, a.usage, b.usage) : 0) || cmp(a.metadata.name, b.metadata.name));
  let out = o.noHeaders ? '' : `${NODE_COLUMNS.map(cell).join('')}\n`;
  const missing = new Map(available);
  for (const m of sorted) {
    out += `${cell(m.metadata.name)}${usageCells(m.usage, available.get(m.metadata.name) ?? {})}\n`;
    missing.delete(m.metadata.name);
  }
  for (const name of [...missing.keys()].sort()) out += `${cell(name)}${cell('<unknown>').repeat(4)}\n`;
  return out;
}

const podTotal = (p: PodMetrics): Usage => ({ cpu: sum(p.containers.map((c) => c.usage.cpu)), memory: sum(p.containers.map((c) => c.usage.memory)) });

/** kubectl top pod's table (before tabwriting). */
export function podMetricsLines(metrics: readonly PodMetrics[], o: { containers?: boolean; withNamespace?: boolean; noHeaders?: boolean; sortBy?: SortBy; sum?: boolean } = {}): string {
  let out = '';
  if (!o.noHeaders) out += `${o.withNamespace ? cell('NAMESPACE') : ''}${o.containers ? cell('POD') : ''}${POD_COLUMNS.map(cell).join('')}\n`;
  const sorted = [...metrics].sort((a, b) => (o.sortBy ? byCpuOrMemory(o.sortBy, podTotal(a), podTotal(b)) : 0)
    || (o.withNamespace ? cmp(a.metadata.namespace ?? '', b.metadata.namespace ?? '') : 0) || cmp(a.metadata.name, b.metadata.name));
  for (const m of sorted) {
    const ns = o.withNamespace ? cell(m.metadata.namespace ?? '') : '';
    if (o.containers) {
      const cs = [...m.containers].sort((a, b) => (o.sortBy ? byCpuOrMemory(o.sortBy, a.usage, b.usage) : 0) || cmp(a.name, b.name));
      for (const c of cs) out += `${ns}${cell(m.metadata.name)}${cell(c.name)}${usageCells(c.usage)}\n`;
    } else {
      out += `${ns}${cell(m.metadata.name)}${usageCells(podTotal(m))}\n`;
    }
  }
  if (o.sum && sorted.length) {
    const total: Usage = { cpu: sum(sorted.map((m) => podTotal(m).cpu)), memory: sum(sorted.map((m) => podTotal(m).memory)) };
    const lead = (o.withNamespace ? 1 : 0) + (o.containers ? 1 : 0);
    out += `${cell('').repeat(lead)}${cell('')}${cell('________')}${cell('________')}\n`;
    out += `${cell('').repeat(lead)}${cell('')}${usageCells(total)}\n`;
  }
  return out;
}

const metricsPath = (suffix: string) => `/apis/metrics.k8s.io/v1beta1/${suffix}`;

async function getMetrics<T>(c: CliContext, path: string, query: Record<string, string>): Promise<T> {
  try {
    return await c.client.requestJson<T>({ path, query });
  } catch (err) {
    // No APIService (404 on the group) or an unavailable backend (503): kubectl says the same.
    if (err instanceof ApiError && (err.code === 503 || (err.code === 404 && !/metrics\.k8s\.io ".*" not found/.test(err.message)))) {
      throw new CliError('error: Metrics API not available');
    }
    if (err instanceof ApiError) throw new CliError(`Error from server (${err.reason}): ${err.message}`);
    throw err;
  }
}

export function registerTop(program: Command, ctx: () => CliContext): void {
  const top = program.command('top').description('Display resource (CPU/memory) usage');
  top.command('node').aliases(['nodes', 'no']).description('Display resource (CPU/memory) usage of nodes').argument('[name]')
    .option('-l, --selector <selector>', 'label selector')
    .option('--sort-by <what>', 'cpu or memory')
    .option('--no-headers', 'print no header line')
    .option('--show-capacity', 'percentages of capacity instead of allocatable')
    .action(async (name: string | undefined, o: { selector?: string; sortBy?: string; headers?: boolean; showCapacity?: boolean }) => {
      const c = ctx();
      const sortBy = checkSortBy(o.sortBy);
      const sel = !name && o.selector ? { labelSelector: o.selector } : {};
      const metrics = name
        ? [await getMetrics<NodeMetrics>(c, metricsPath(`nodes/${encodeURIComponent(name)}`), {})]
        : (await getMetrics<{ items: NodeMetrics[] }>(c, metricsPath('nodes'), sel)).items;
      if (metrics.length === 0) throw new CliError('error: metrics not available yet');
      const nodes = name ? [await c.client.resource<KubeObject>(Nodes).get(name)] : (await c.client.resource<KubeObject>(Nodes).list(sel)).items;
      const available = new Map<string, Usage>();
      for (const n of nodes) {
        const st = (n['status'] ?? {}) as { allocatable?: Usage; capacity?: Usage };
        available.set(n.metadata.name, (o.showCapacity ? st.capacity : st.allocatable) ?? {});
      }
      c.print(tabwrite(nodeMetricsLines(metrics, available, { noHeaders: o.headers === false, sortBy })));
    });
  top.command('pod').aliases(['pods', 'po']).description('Display resource (CPU/memory) usage of pods').argument('[name]')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('-l, --selector <selector>', 'label selector')
    .option('--field-selector <selector>', 'field selector (metadata.name, metadata.namespace)')
    .option('--containers', 'one line per container')
    .option('--sort-by <what>', 'cpu or memory')
    .option('--no-headers', 'print no header line')
    .option('--sum', 'print the sum of the usage')
    .action(async (name: string | undefined, o: { allNamespaces?: boolean; selector?: string; fieldSelector?: string; containers?: boolean; sortBy?: string; headers?: boolean; sum?: boolean }) => {
      const c = ctx();
      const sortBy = checkSortBy(o.sortBy);
      const all = !!o.allNamespaces && !name;
      const ns = c.namespace;
      const query: Record<string, string> = {};
      if (!name && o.selector) query['labelSelector'] = o.selector;
      if (!name && o.fieldSelector) query['fieldSelector'] = o.fieldSelector;
      let metrics: PodMetrics[];
      try {
        metrics = name
          ? [await getMetrics<PodMetrics>(c, metricsPath(`namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}`), {})]
          : (await getMetrics<{ items: PodMetrics[] }>(c, metricsPath(all ? 'pods' : `namespaces/${encodeURIComponent(ns)}/pods`), query)).items;
      } catch (err) {
        // kubectl: a pod that exists but has no metrics yet says so with its age.
        if (name && err instanceof CliError && /NotFound/.test(err.message)) {
          const pod = await c.client.resource<KubeObject>(Pods, ns).get(name).catch(() => undefined);
          if (pod) throw new CliError(`error: Metrics not available for pod ${ns}/${name}, age: ${translateTimestampSince(pod.metadata.creationTimestamp, Date.now())}`);
        }
        throw err;
      }
      if (metrics.length === 0) {
        const pods = (await c.client.resource<KubeObject>(Pods, all ? undefined : ns).list(query)).items;
        if (pods.length > 0) {
          for (const p of pods) {
            if (p.metadata.deletionTimestamp) continue;
            const age = Date.now() - Date.parse(p.metadata.creationTimestamp ?? '');
            if (age > METRICS_CREATION_DELAY_MS) throw new CliError(`error: Metrics not available for pod ${p.metadata.namespace}/${p.metadata.name}, age: ${translateTimestampSince(p.metadata.creationTimestamp, Date.now())}`);
          }
          throw new CliError('error: metrics not available yet');
        }
        c.printErr(all ? 'No resources found\n' : `No resources found in ${ns} namespace.\n`);
        return;
      }
      c.print(tabwrite(podMetricsLines(metrics, { containers: !!o.containers, withNamespace: all, noHeaders: o.headers === false, sortBy, sum: !!o.sum })));
    });
}
