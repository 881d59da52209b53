/* eslint-disable @typescript-eslint/no-explicit-any */
// Differential fuzzing of applyStrategicMergePatch against the real kubectl 1.32
// (`kubectl patch --local`): random pods and kubectl-apply-shaped patches (merge-keyed lists,
// $setElementOrder, $patch: delete, $deleteFromPrimitiveList, nulls). Not part of the unit run
// (it spawns kubectl per case); run by hand after touching the SMP code:
//   node --conditions=@mk8s/source --import tsx api/src/patch/testdata/fuzz-kubectl.ts <seed> <cases>
// Prints each mismatch; interesting ones belong in smp-cases.json.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyStrategicMergePatch } from '../strategic-merge-patch.js';
import { Pods } from '../../scheme.js';

const dir = mkdtempSync(join(tmpdir(), 'smp-fuzz-'));
const objFile = join(dir, 'o.json');

let seed = Number(process.argv[2] ?? 1);
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const pick = <T,>(a: T[]): T => a[Math.floor(rnd() * a.length)]!;
const names = ['a', 'b', 'c', 'd'];
const subset = <T,>(a: T[]) => a.filter(() => rnd() < 0.5);
const shuffle = <T,>(a: T[]) => [...a].sort(() => rnd() - 0.5);
const env = () => shuffle(subset(['X', 'Y', 'Z'])).map((n) => ({ name: n, value: pick(['1', '2']) }));
const ports = () => shuffle(subset([80, 443, 8080])).map((p) => ({ containerPort: p, protocol: 'TCP' }));
const container = (n: string, full: boolean) => {
  const c: Record<string, unknown> = { name: n };
  if (full || rnd() < 0.5) c['image'] = pick(['i:1', 'i:2']);
  if (rnd() < 0.5) c['env'] = env();
  if (rnd() < 0.4) c['ports'] = ports();
  if (rnd() < 0.3) c['args'] = subset(['x', 'y']);
  return c;
};
const original = () => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: Object.fromEntries(subset(['l1', 'l2']).map((k) => [k, 'v'])), finalizers: subset(['f1', 'f2', 'f3']) },
  spec: { containers: shuffle(subset(names)).map((n) => container(n, true)), nodeSelector: rnd() < 0.5 ? { a: '1' } : undefined } });
function patchFor(orig: any) {
  const p: any = { spec: {} };
  const live: string[] = orig.spec.containers.map((c: any) => c.name);
  const target = shuffle(subset(names));
  if (rnd() < 0.7) p.spec['$setElementOrder/containers'] = target.map((n) => ({ name: n }));
  const list: any[] = [];
  for (const n of target) if (rnd() < 0.6) {
    const isLive = live.includes(n);
    const c: any = container(n, !isLive);
    if (isLive && rnd() < 0.3 && c.env) c['$setElementOrder/env'] = c.env.map((e: any) => ({ name: e.name }));
    const lc = orig.spec.containers.find((x: any) => x.name === n);
    if (isLive && lc?.env && rnd() < 0.3) c.env = [...(c.env ?? []), { name: pick(['X', 'Y', 'Z', 'W']), $patch: 'delete' }];
    if (isLive && lc?.ports && rnd() < 0.2) c.ports = [...(c.ports ?? []), { containerPort: pick([80, 443]), $patch: 'delete' }];
    if (isLive && rnd() < 0.2) c.image = null;
    list.push(c);
  }
  for (const n of live) if (!target.includes(n) && rnd() < 0.5) list.push({ name: n, $patch: 'delete' });
  if (list.length || rnd() < 0.3) p.spec.containers = list;
  if (rnd() < 0.3) p.spec.nodeSelector = rnd() < 0.5 ? null : { b: '2' };
  if (rnd() < 0.4) p.metadata = { labels: { l1: pick([null, 'w']) } };
  if (rnd() < 0.4) { p.metadata ??= {}; p.metadata.finalizers = subset(['f1', 'f4']); }
  if (rnd() < 0.3) { p.metadata ??= {}; p.metadata['$deleteFromPrimitiveList/finalizers'] = subset(['f2', 'f3']); }
  if (rnd() < 0.2) { p.metadata ??= {}; p.metadata['$setElementOrder/finalizers'] = shuffle(subset(['f1', 'f2', 'f3', 'f4'])); }
  return p;
}
let diffs = 0, errs = 0, orderOnly = 0;
const N = Number(process.argv[3] ?? 100);
for (let i = 0; i < N; i++) {
  const o = JSON.parse(JSON.stringify(original()));
  const p = patchFor(o);
  writeFileSync(objFile, JSON.stringify(o));
  const r = spawnSync('kubectl', ['patch', '--local', '-f', objFile, '--type=strategic', '-p', JSON.stringify(p), '-o', 'json'], { encoding: 'utf8', env: { ...process.env, KUBECONFIG: '/dev/null' } });
  let mine: unknown, mineErr: string | undefined;
  try { mine = applyStrategicMergePatch(o, p, Pods); } catch (e) { mineErr = (e as Error).message; }
  if (r.status !== 0) {
    if (!mineErr) { errs++; if (errs < 4) console.log('KUBECTL ERR only', r.stderr.trim(), JSON.stringify(o), JSON.stringify(p)); }
    continue;
  }
  if (mineErr) { errs++; if (errs < 4) console.log('MINE ERR only', mineErr, JSON.stringify(o), JSON.stringify(p)); continue; }
  const want = JSON.parse(r.stdout);
  if (JSON.stringify(want) !== JSON.stringify(sortKeys(mine))) {
    const names = (x: any) => (x.spec.containers ?? []).map((c: any) => c.name).sort().join();
    const byName = (x: any) => JSON.stringify(sortKeys({ ...x, spec: { ...x.spec, containers: [...(x.spec.containers ?? [])].sort((a: any, b: any) => a.name < b.name ? -1 : 1) } }));
    if (names(want) === names(mine) && byName(want) === byName(sortKeys(mine))) { orderOnly++; continue; }
    diffs++;
    if (diffs < 4) console.log('DIFF\n o=', JSON.stringify(o), '\n p=', JSON.stringify(p), '\n want=', JSON.stringify(want), '\n mine=', JSON.stringify(sortKeys(mine)));
  }
}
function sortKeys(v: any): any { if (Array.isArray(v)) return v.map(sortKeys); if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])])); return v; }
console.log(`cases ${N} diffs ${diffs} orderOnly ${orderOnly} errorMismatches ${errs}`);
rmSync(dir, { recursive: true, force: true });
