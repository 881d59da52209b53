/**
 * T13, hostile input (issue 21): 10,000 fuzzed requests (lib/fuzz.ts: random paths, verbs,
 * content types, JSON/YAML/protobuf bodies, huge numbers, deep nesting, hostile query strings),
 * YAML bombs, bodies over upstream's 3 MiB limit, 8 in flight at a time, with the admin's
 * credentials. Mutations stay inside a sandbox namespace whose ResourceQuota of 0 keeps workloads
 * from existing. Goals: 0 answers 5xx, 0 apiserver crashes (same pid, no supervisor restart),
 * YAML bombs refused, oversized bodies 413.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Namespaces, ResourceQuotas } from '@mk8s/api';
import { loadKubeConfig, restConfigFromKubeConfig } from '@mk8s/client';
import { KUBECONFIG, adminClient, apiserverNames, figure, supervised, uniqueName, waitFor } from './lib/chaos.js';
import { hostileRequests, oversized, sendAll, yamlBombs, type Answer, type FuzzRequest, type Target } from './lib/fuzz.js';

const ns = uniqueName('chaos-fuzz');
const client = adminClient('chaos-t13');
const N = Number(process.env['CHAOS_FUZZ_REQUESTS'] ?? 10_000);
const SEED = Number(process.env['CHAOS_FUZZ_SEED'] ?? 1321);

before(async () => {
  await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await client.resource(ResourceQuotas, ns).create({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'nothing', namespace: ns },
    spec: { hard: { pods: '0', services: '0', persistentvolumeclaims: '0', 'count/deployments.apps': '0', 'count/statefulsets.apps': '0', 'count/jobs.batch': '0', 'count/replicasets.apps': '0' } } } as never);
});
after(async () => { await client.resource(Namespaces).delete(ns).catch(() => undefined); });

/** A transport error on a reused keep-alive connection is the client's race, not an answer: try it once more alone. */
async function settle(t: Target, reqs: FuzzRequest[], answers: Answer[]): Promise<Answer[]> {
  const out = [...answers];
  for (const [i, a] of answers.entries()) {
    if (a.status !== 'error' || a.ms === 0) continue;
    out[i] = (await sendAll(t, [reqs[i]!], 1))[0]!;
  }
  return out;
}

test('T13: 10,000 hostile requests, YAML bombs and oversized bodies: no 5xx, no crash', { timeout: 900_000 }, async () => {
  const rc = restConfigFromKubeConfig(loadKubeConfig(KUBECONFIG));
  const target: Target = { url: rc.server, ...(rc.ca ? { ca: rc.ca } : {}), ...(rc.cert ? { cert: rc.cert } : {}), ...(rc.key ? { key: rc.key } : {}), ...(rc.token ? { token: rc.token } : {}) };
  const names = apiserverNames();
  const before = Object.fromEntries(names.map((n) => [n, { pid: supervised()[n]?.pid, restarts: supervised()[n]?.restarts ?? 0 }]));

  const bombs = yamlBombs(ns), big = oversized(ns), fuzz = hostileRequests(N, SEED, ns);
  const t0 = Date.now();
  const bombAnswers = await settle(target, bombs, await sendAll(target, bombs, 2));
  const bigAnswers = await settle(target, big, await sendAll(target, big, 2));
  const fuzzAnswers = await settle(target, fuzz, await sendAll(target, fuzz, 8));
  const seconds = (Date.now() - t0) / 1000;

  const all = [...bombAnswers, ...bigAnswers, ...fuzzAnswers];
  const reqs = [...bombs, ...big, ...fuzz];
  const is5xx = (a: Answer) => typeof a.status === 'number' && a.status >= 500;
  const bad = all.map((a, i) => ({ a, r: reqs[i]! })).filter(({ a }) => is5xx(a) || a.status === 'timeout' || (a.status === 'error' && a.ms > 0));
  const codes = new Map<string, number>();
  for (const a of all) codes.set(String(a.status), (codes.get(String(a.status)) ?? 0) + 1);
  const bombsRefused = bombAnswers.filter((a) => typeof a.status === 'number' && a.status >= 400 && a.status < 500).length;
  // A body over the limit: 413, or the connection closed by the server once the limit is passed (upstream's http.MaxBytesReader).
  const big413 = bigAnswers.filter((a) => a.status === 413).length;

  // Still alive, same processes, nothing restarted.
  await waitFor(async () => (await client.resource(Namespaces).get(ns)).metadata.name === ns, { timeoutMs: 30_000, what: 'the apiserver answering' });
  const crashed = names.filter((n) => supervised()[n]?.pid !== before[n]?.pid || (supervised()[n]?.restarts ?? 0) !== before[n]?.restarts);

  figure('T13', 'hostile input: 5xx answers', bad.filter(({ a }) => is5xx(a)).length, '0',
    `apiserver crashes/restarts ${crashed.length} (goal 0); hung or dropped ${bad.filter(({ a }) => !is5xx(a)).length} (goal 0); ${all.length} requests in ${seconds.toFixed(0)}s, 8 in flight; answers ${[...codes].sort().map(([c, n]) => `${c}:${n}`).join(' ')}`);
  figure('T13', 'YAML bombs refused', `${bombsRefused} of ${bombAnswers.length}`, `${bombAnswers.length}`, `oversized bodies (3 MiB+1 .. 16 MiB) answered 413: ${big413} of ${bigAnswers.length} (goal ${bigAnswers.length})`);
  for (const { a, r } of bad.slice(0, 20)) console.log(`bad: ${a.status} ${a.error ?? ''} ${r.method} ${r.path.slice(0, 200)} ct=${r.headers['content-type'] ?? '-'} body=${JSON.stringify(r.body?.subarray(0, 120).toString() ?? '')} -> ${a.bodyStart?.slice(0, 200) ?? ''}`);
  assert.deepEqual(crashed, [], 'no apiserver crashed or restarted');
  assert.equal(bad.length, 0, 'no 5xx, hang or dropped connection');
  assert.equal(bombsRefused, bombAnswers.length, 'every YAML bomb refused with a 4xx');
  assert.equal(big413, bigAnswers.length, 'every oversized body answered 413');
});
