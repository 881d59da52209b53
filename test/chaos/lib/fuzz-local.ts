/**
 * T13's fuzzer against a throwaway apiserver on real etcd (no cluster, no lock):
 *   node --conditions=@mk8s/source --import tsx test/chaos/lib/fuzz-local.ts [n] [seed]
 * Prints every 5xx and transport error with its request, for fixing before `make chaos`.
 */
import { startTestApiServer } from '@mk8s/apiserver/testing';
import { hostileRequests, oversized, sendAll, yamlBombs, type FuzzRequest } from './fuzz.js';

const n = Number(process.argv[2] ?? 2000), seed = Number(process.argv[3] ?? 1);
const s = await startTestApiServer({ etcdMembers: 1 });
try {
  await fetch(`${s.url}/api/v1/namespaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fuzz' } }) });
  const reqs: FuzzRequest[] = [...yamlBombs('fuzz'), ...oversized('fuzz'), ...hostileRequests(n, seed, 'fuzz')];
  const t0 = Date.now();
  const answers: Awaited<ReturnType<typeof sendAll>> = [];
  for (let i = 0; i < reqs.length; i += 100) {
    answers.push(...await sendAll({ url: s.url }, reqs.slice(i, i + 100), 8, 10_000));
    console.error(`${i + 100} sent, ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  }
  const counts = new Map<string, number>();
  for (const [i, a] of answers.entries()) {
    counts.set(String(a.status), (counts.get(String(a.status)) ?? 0) + 1);
    if (a.status === 'timeout' || (typeof a.status === 'number' && a.status >= 500) || (a.status === 'error' && a.ms > 0)) {
      const r = reqs[i]!;
      console.log(`#${i} ${a.status} ${a.error ?? ''} ${r.method} ${r.path.slice(0, 200)} ct=${r.headers['content-type'] ?? '-'} body=${r.body ? JSON.stringify(r.body.subarray(0, 200).toString()) : '-'} -> ${a.bodyStart?.slice(0, 200)}`);
    }
  }
  console.log(`${reqs.length} requests in ${((Date.now() - t0) / 1000).toFixed(1)}s`, Object.fromEntries(counts));
} finally { await s.stop(); }
