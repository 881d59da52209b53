/**
 * The cost of one chain, as the dashboard's chain view pays it on every re-gather and `mkctl
 * trace` once: gatherTrace + traceLinks of a Deployment with BENCH_PODS pods (and as many Events,
 * a Service, its EndpointSlices, 3 nodes) from an in-memory GET that serves the lists as JSON text
 * ÷ the floor: JSON.parse of the very same bodies (what reading them costs at least). Rounds
 * alternate who goes first; medians. In-process, no I/O.
 */
import { gatherTrace, traceLinks, type ApiGet } from '@mk8s/api/trace';
import { fmt, printHeader, printRow } from '../lib.js';

const PODS = Number(process.env['BENCH_PODS'] ?? 1000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 7);
const ns = 'bench';
const T0 = '2026-12-01T00:00:00Z';
const owner = (kind: string, name: string, uid: string) => [{ apiVersion: 'apps/v1', kind, name, uid, controller: true }];
const list = (items: unknown[]) => JSON.stringify({ kind: 'List', metadata: { resourceVersion: '100' }, items });

const pods = Array.from({ length: PODS }, (_, i) => ({
  metadata: { name: `web-1-${i}`, namespace: ns, uid: `p${i}`, labels: { app: 'web' }, ownerReferences: owner('ReplicaSet', 'web-1', 'r1'), creationTimestamp: T0 },
  spec: { nodeName: `node-${i % 3}`, containers: [{ name: 'web', image: 'mk8s/testserver:1.0', readinessProbe: { httpGet: { path: '/readyz', port: 8080 } } }] },
  status: {
    phase: 'Running', podIP: `10.244.${i % 3}.${(i % 250) + 2}`,
    conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: T0 }, { type: 'Ready', status: 'True', lastTransitionTime: T0 }],
    containerStatuses: [{ name: 'web', image: 'mk8s/testserver:1.0', imageID: 'docker://sha', ready: true, restartCount: 0, state: { running: { startedAt: T0 } } }],
  },
}));
const routes: Record<string, string> = {
  [`/apis/apps/v1/namespaces/${ns}/deployments/web`]: JSON.stringify({ metadata: { name: 'web', namespace: ns, uid: 'd1', resourceVersion: '9', generation: 1, annotations: { 'deployment.kubernetes.io/revision': '1' } }, spec: { replicas: PODS, selector: { matchLabels: { app: 'web' } }, template: {} }, status: { observedGeneration: 1 } }),
  [`/apis/apps/v1/namespaces/${ns}/replicasets`]: list([{ metadata: { name: 'web-1', namespace: ns, uid: 'r1', annotations: { 'deployment.kubernetes.io/revision': '1' }, ownerReferences: owner('Deployment', 'web', 'd1') }, spec: { replicas: PODS, selector: {} } }]),
  [`/api/v1/namespaces/${ns}/pods`]: list(pods),
  [`/api/v1/namespaces/${ns}/services`]: list([{ metadata: { name: 'web', namespace: ns }, spec: { selector: { app: 'web' }, clusterIP: '10.96.0.20' } }]),
  [`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`]: list(Array.from({ length: Math.ceil(PODS / 100) }, (_, s) => ({
    metadata: { name: `web-${s}`, labels: { 'kubernetes.io/service-name': 'web' } },
    endpoints: pods.slice(s * 100, s * 100 + 100).map((p) => ({ addresses: [p.status.podIP], conditions: { ready: true } })),
  }))),
  '/api/v1/nodes': list([0, 1, 2].map((n) => ({ metadata: { name: `node-${n}` }, status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: T0 }] } }))),
  [`/api/v1/namespaces/${ns}/events`]: list(pods.map((p, i) => ({ metadata: { name: `e${i}` }, involvedObject: { kind: 'Pod', name: p.metadata.name }, reason: 'Started', type: 'Normal', message: 'Started container web', lastTimestamp: T0 }))),
  [`/api/v1/namespaces/${ns}/configmaps`]: list([]),
  [`/api/v1/namespaces/${ns}/secrets`]: list([]),
  [`/api/v1/namespaces/${ns}/persistentvolumeclaims`]: list([]),
  '/api/v1/persistentvolumes': list([]),
};
const get: ApiGet = async (path) => JSON.parse(routes[path] ?? list([]));

async function ours(): Promise<number> {
  const t0 = performance.now();
  const links = traceLinks(await gatherTrace(get, { kind: 'Deployment', namespace: ns, name: 'web' }));
  const ms = performance.now() - t0;
  if (links.at(-1)?.step !== 'kube-proxy') throw new Error(`unexpected chain: ${JSON.stringify(links.map((l) => `${l.step}:${l.status}`))}`);
  return ms;
}
async function floor(): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Object.keys(routes).map((p) => get(p)));
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const a: number[] = []; const b: number[] = [];
for (let i = 0; i < 3; i++) { await ours(); await floor(); }     // warm-up (JIT)
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2) { b.push(await floor()); a.push(await ours()); } else { a.push(await ours()); b.push(await floor()); }
}
printHeader(`chain of a Deployment with ${PODS} pods, ${PODS} events (${ROUNDS} rounds, median; load ${(await import('node:os')).loadavg()[0]!.toFixed(1)})`);
printRow('gather + traceLinks ms vs JSON.parse', fmt(median(a)), fmt(median(b)), fmt(median(a) / median(b)), '≤ 3 (the rules cost less than twice reading the inputs)');
