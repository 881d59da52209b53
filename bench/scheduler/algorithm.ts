/**
 * bench/scheduler/algorithm: the scheduling algorithm alone, in this process, no I/O: snapshot
 * update, PreFilter/Filter over the adaptive share of nodes, PreScore/Score, assume. Prints CPU
 * milliseconds per cycle on BENCH_NODES (1,000) nodes already holding BENCH_PODS (5,000) pods, for
 * the three pod shapes of run.ts. What run.ts measures on top of this is binding, the informer
 * and Events: the difference says how much of a scheduled pod is the algorithm.
 * Run: node --conditions=@mk8s/source --import tsx bench/scheduler/algorithm.ts
 */
import { readFileSync } from 'node:fs';
import { CycleState, Scheduler } from '@mk8s/scheduler';
import { makeNode, makePod, type PodOptions } from '@mk8s/scheduler/testing';
import { fmt } from '../lib.js';

const NODES = Number(process.env['BENCH_NODES'] ?? 1000);
const PODS = Number(process.env['BENCH_PODS'] ?? 5000);
const ZONE = 'topology.kubernetes.io/zone';
const requests = { cpu: '100m', memory: '128Mi' };

const shapes: Record<string, { cycles: number; pod: () => PodOptions }> = {
  basic: { cycles: 3000, pod: () => ({ requests }) },
  'pod anti-affinity': {
    cycles: Math.min(900, NODES - 1),
    pod: () => ({
      requests, labels: { group: 'anti' },
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { group: 'anti' } }, topologyKey: 'kubernetes.io/hostname' }] } },
    }),
  },
  'topology spread': {
    cycles: 3000,
    pod: () => ({
      requests, labels: { group: 'spread' },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { group: 'spread' } } }],
    }),
  },
};

console.log(`\nbench/scheduler/algorithm: ${NODES} nodes, ${PODS} pods placed; CPU per scheduling cycle (no binding, no I/O)`);
for (const [name, shape] of Object.entries(shapes)) {
  const s = new Scheduler({ client: undefined });
  for (let i = 0; i < NODES; i++) {
    s.onNodeAdd(makeNode(`n${i}`, { labels: { [ZONE]: `zone-${i % 10}` }, allocatable: { cpu: '32', memory: '128Gi', pods: '110' } }));
  }
  for (let i = 0; i < PODS; i++) s.onPodAdd(makePod(`x${i}`, { namespace: 'placed', nodeName: `n${i % NODES}`, requests }));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < shape.cycles; i++) {
    const pod = makePod(`p${i}`, { namespace: 'bench', ...shape.pod() });
    const r = s.schedulePod(new CycleState(s.cache.updateSnapshot()), pod);
    s.cache.assumePod({ ...pod, spec: { ...pod.spec!, nodeName: r.suggestedHost } });
  }
  const cpu = process.cpuUsage(cpu0);
  const ms = (cpu.user + cpu.system) / 1000 / shape.cycles;
  console.log(`${`${name}: ${shape.cycles} cycles`.padEnd(38)} ${fmt(ms, 3).padStart(8)} ms CPU/cycle   ${fmt((performance.now() - t0) / shape.cycles, 3).padStart(8)} ms wall/cycle`);
}
console.log(`  load average: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 2).join(' ')}`);
