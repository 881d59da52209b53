/**
 * /metrics/resource: the kubelet's resource metrics endpoint, what metrics-server scrapes
 * (upstream pkg/kubelet/metrics/collectors/resource_metrics.go). Names, help texts (with
 * component-base's stability prefix), label names and explicit millisecond timestamps as upstream;
 * families sorted by name and label pairs by label name, as client_golang's text encoder writes
 * them; families without a sample left out. Rendered by hand: prom-client cannot carry a sample's
 * own timestamp, which metrics-server needs to turn two cumulative CPU samples into a rate.
 */
import type { ContainerStatsSummary, PodStats, Summary } from './stats-summary.js';

interface Family { name: string; help: string; type: 'counter' | 'gauge'; samples: string[] }

/**
 * formatFloat writes a float as Go's strconv.FormatFloat(f, 'g', -1, 64) (what the Prometheus
 * text encoder uses): the shortest round-tripping digits, in exponent form when the exponent is
 * < -4 or >= 6 (Go's %g decision for the shortest precision), e.g. 2.316354, 123456, 1.2288e+07,
 * 1.6842374e+09, 1e-05.
 */
export function formatFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mant, expStr] = f.toExponential().split('e') as [string, string];
  const exp = Number(expStr);
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(f);
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labelSet = (l: Record<string, string>): string => {
  const keys = Object.keys(l).sort();
  return keys.length ? `{${keys.map((k) => `${k}="${escapeLabel(l[k]!)}"`).join(',')}}` : '';
};
const sample = (name: string, labels: Record<string, string>, value: number, timestampMs?: number) =>
  `${name}${labelSet(labels)} ${formatFloat(value)}${timestampMs !== undefined ? ` ${Math.floor(timestampMs)}` : ''}`;

/**
 * renderResourceMetrics renders one scrape from a Summary (its cpu and memory parts) and the
 * number of errors met while building it (scrape_error / resource_scrape_error: 1 when the
 * runtime could not be read, and then no other series, as upstream).
 */
export function renderResourceMetrics(s: Summary | undefined, errorCount: number): string {
  const fam = (name: string, type: Family['type'], stability: 'STABLE' | 'ALPHA', help: string): Family => ({ name, type, help: `[${stability}] ${help}`, samples: [] });
  const nodeCpu = fam('node_cpu_usage_seconds_total', 'counter', 'STABLE', 'Cumulative cpu time consumed by the node in core-seconds');
  const nodeMem = fam('node_memory_working_set_bytes', 'gauge', 'STABLE', 'Current working set of the node in bytes');
  const cStart = fam('container_start_time_seconds', 'gauge', 'STABLE', 'Start time of the container since unix epoch in seconds');
  const cCpu = fam('container_cpu_usage_seconds_total', 'counter', 'STABLE', 'Cumulative cpu time consumed by the container in core-seconds');
  const cMem = fam('container_memory_working_set_bytes', 'gauge', 'STABLE', 'Current working set of the container in bytes');
  const pCpu = fam('pod_cpu_usage_seconds_total', 'counter', 'STABLE', 'Cumulative cpu time consumed by the pod in core-seconds');
  const pMem = fam('pod_memory_working_set_bytes', 'gauge', 'STABLE', 'Current working set of the pod in bytes');
  const scrapeErr = fam('scrape_error', 'gauge', 'ALPHA', '(Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise');
  const resScrapeErr = fam('resource_scrape_error', 'gauge', 'STABLE', '1 if there was an error while getting container metrics, 0 otherwise');
  if (s) {
    const n = s.node;
    if (n.cpu?.usageCoreNanoSeconds !== undefined) nodeCpu.samples.push(sample(nodeCpu.name, {}, n.cpu.usageCoreNanoSeconds / 1e9, n.cpu.timeMs));
    if (n.memory?.workingSetBytes !== undefined) nodeMem.samples.push(sample(nodeMem.name, {}, n.memory.workingSetBytes, n.memory.timeMs));
    for (const p of s.pods) {
      for (const c of p.containers) containerSamples(p, c, cStart, cCpu, cMem);
      const l = { pod: p.podRef.name, namespace: p.podRef.namespace };
      if (p.cpu?.usageCoreNanoSeconds !== undefined) pCpu.samples.push(sample(pCpu.name, l, p.cpu.usageCoreNanoSeconds / 1e9, p.cpu.timeMs));
      if (p.memory?.workingSetBytes !== undefined) pMem.samples.push(sample(pMem.name, l, p.memory.workingSetBytes, p.memory.timeMs));
    }
  }
  scrapeErr.samples.push(sample(scrapeErr.name, {}, errorCount));
  resScrapeErr.samples.push(sample(resScrapeErr.name, {}, errorCount));
  const families = [nodeCpu, nodeMem, cStart, cCpu, cMem, pCpu, pMem, scrapeErr, resScrapeErr]
    .filter((f) => f.samples.length > 0)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return families.map((f) => `# HELP ${f.name} ${f.help}\n# TYPE ${f.name} ${f.type}\n${f.samples.join('\n')}\n`).join('');
}

function containerSamples(p: PodStats, c: ContainerStatsSummary, start: Family, cpu: Family, mem: Family): void {
  const l = { container: c.name, pod: p.podRef.name, namespace: p.podRef.namespace };
  // Upstream: no start time sample for a zero time; no timestamp on it.
  if (c.startTimeMs > 0) start.samples.push(sample(start.name, l, c.startTimeMs / 1000));
  if (c.cpu?.usageCoreNanoSeconds !== undefined) cpu.samples.push(sample(cpu.name, l, c.cpu.usageCoreNanoSeconds / 1e9, c.cpu.timeMs));
  if (c.memory?.workingSetBytes !== undefined) mem.samples.push(sample(mem.name, l, c.memory.workingSetBytes, c.memory.timeMs));
}
