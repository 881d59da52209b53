/**
 * bench/apiserver, custom resources: creates/s of a custom object (a CRD with a structural schema:
 * pruning, defaulting, ajv validation) ÷ creates/s of a ConfigMap of the same size, both through
 * the same apiserver in the same run, alternating in rounds (order flipped every round). Goal ≥ 0.9.
 */
import { fmt, printRow, runConcurrent } from '../lib.js';

type Post = (path: string, body: unknown) => Promise<string>;
type Get = (path: string) => Promise<{ status: number; body: string }>;

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'benchobjects.bench.example.com' },
  spec: {
    group: 'bench.example.com', scope: 'Namespaced', names: { plural: 'benchobjects', singular: 'benchobject', kind: 'BenchObject' },
    versions: [{
      name: 'v1', served: true, storage: true, subresources: { status: {} },
      schema: { openAPIV3Schema: { type: 'object', properties: {
        spec: { type: 'object', required: ['i'], properties: { i: { type: 'string', pattern: '^[0-9]+$' }, size: { type: 'string', enum: ['small', 'large'], default: 'small' }, replicas: { type: 'integer', minimum: 0, default: 1 } } },
        status: { type: 'object', properties: { ready: { type: 'boolean' } } },
      } } },
    }],
  },
};

export async function benchCustomResources(post: Post, get: Get, o: { creates: number; inFlight: number; rounds: number; warmup: number }): Promise<void> {
  await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-crd' } });
  await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', CRD);
  const deadline = Date.now() + 30_000;
  while ((await get('/apis/bench.example.com/v1')).status !== 200) {
    if (Date.now() > deadline) throw new Error('the bench CRD was not served');
    await new Promise((r) => setTimeout(r, 50));
  }
  const cr = (name: string, i: number) => ({ apiVersion: 'bench.example.com/v1', kind: 'BenchObject', metadata: { name }, spec: { i: String(i), size: 'large', replicas: 3 } });
  const cm = (name: string, i: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { i: String(i), size: 'large', replicas: '3' } });
  const crPath = '/apis/bench.example.com/v1/namespaces/bench-crd/benchobjects';
  const cmPath = '/api/v1/namespaces/bench-crd/configmaps';
  await runConcurrent(o.warmup, o.inFlight, async (i) => { await post(crPath, cr(`w-${i}`, i)); });
  await runConcurrent(o.warmup, o.inFlight, async (i) => { await post(cmPath, cm(`w-${i}`, i)); });
  const slice = Math.ceil(o.creates / o.rounds);
  let crMs = 0; let cmMs = 0;
  for (let round = 0; round < o.rounds; round++) {
    const base = round * slice;
    const n = Math.min(slice, o.creates - base);
    const crPhase = async () => { crMs += (await runConcurrent(n, o.inFlight, async (i) => { await post(crPath, cr(`c-${base + i}`, i)); })).elapsedMs; };
    const cmPhase = async () => { cmMs += (await runConcurrent(n, o.inFlight, async (i) => { await post(cmPath, cm(`c-${base + i}`, i)); })).elapsedMs; };
    if (round % 2 === 0) { await crPhase(); await cmPhase(); } else { await cmPhase(); await crPhase(); }
  }
  const crRate = o.creates / (crMs / 1000);
  const cmRate = o.creates / (cmMs / 1000);
  printRow(`custom resource creates/s (${o.inFlight} in flight) vs ConfigMap`, fmt(crRate, 0), fmt(cmRate, 0), fmt(crRate / cmRate), '≥ 0.9');
}
