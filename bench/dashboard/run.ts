/**
 * The dashboard with 1,000 pods, measured in the browser (issue 22): how long the pod list takes
 * to render all rows, and how long a change (a pod's status, a new pod, a deleted pod) takes to
 * show on the page, each ÷ its raw floor measured in the same run: the same LIST fetched by the
 * page without rendering, and the same change seen by a plain watch client in Node.
 * Hollow pods: Pod objects bound to a Node object no kubelet runs, created through the API.
 * Everything runs here: a 1-member etcd, the apiserver (in-process, no TLS), the dashboard server
 * (in-process) and Debian's Chromium (headless, playwright-core). Prints FIGURE lines; asserts
 * nothing. BENCH_PODS (1000), BENCH_CHANGES (20).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startTestApiServer } from '@mk8s/apiserver/testing';
import { createLogger } from '@mk8s/component-base';
import { buildDashboardServer, httpsUpstream, loadAssets } from '@mk8s/dashboard';
import { fmt, printHeader, printRow, runConcurrent, summarize } from '../lib.js';

const ROOT = process.env['MK8S_ROOT'] ?? new URL('../..', import.meta.url).pathname;
const PODS = Number(process.env['BENCH_PODS'] ?? 1000);
const CHANGES = Number(process.env['BENCH_CHANGES'] ?? 20);
const NS = 'bench-dashboard';
const NODE = 'hollow-node-0';
const figure = (line: string) => console.log(`FIGURE ${line}`);
// What the page-side callbacks use (they run in the browser; the bench is type-checked for Node).
interface El { textContent: string | null; querySelector(s: string): El | null }
declare const document: { querySelectorAll(s: string): { length: number }; querySelector(s: string): El | null };
declare const sessionStorage: { setItem(k: string, v: string): void };
declare const location: { hash: string };

const api = await startTestApiServer({ etcdMembers: 1 });
const dash = await buildDashboardServer({ upstream: httpsUpstream({ server: api.url }), assets: loadAssets(join(ROOT, 'dashboard', 'dist', 'app')), logger: createLogger({ level: 'warn' }) });
await dash.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(dash.server.address() as { port: number }).port}`;
const browser = await chromium.launch({ executablePath: process.env['MK8S_CHROMIUM'] ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${api.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS }, spec: { nodeName: NODE, containers: [{ name: 'c', image: 'mk8s/pause:3.9' }] } });
const status = (running: boolean) => running
  ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'c', image: 'mk8s/pause:3.9', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } }] }
  : { phase: 'Pending', containerStatuses: [{ name: 'c', image: 'mk8s/pause:3.9', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] };

try {
  await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await call('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE }, status: { conditions: [{ type: 'Ready', status: 'True' }], capacity: { pods: '2000', cpu: '64', memory: '256Gi' }, allocatable: { pods: '2000', cpu: '64', memory: '256Gi' } } });
  const created = await runConcurrent(PODS, 32, (i) => call('POST', `/api/v1/namespaces/${NS}/pods`, pod(`p-${i}`)).then(() => undefined));
  console.log(`created ${PODS} hollow pods on ${NODE} in ${fmt(created.elapsedMs / 1000, 1)} s`);

  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  // Load the app once (the bundle cached), so the render figure is the list, not the first download.
  await page.goto(`${base}/#token=bench&next=%2Fcluster`);
  await page.waitForSelector('[data-testid=nodes]');
  const rows = `[data-testid=pods] tbody tr`;

  const render: number[] = [];
  const floor: number[] = [];
  for (let round = 0; round < 3; round++) {
    // Floor: the same Table LIST, fetched by the page itself, without rendering.
    floor.push(await page.evaluate(async (ns) => {
      const t = performance.now();
      const r = await fetch(`/api/v1/namespaces/${ns}/pods`, { headers: { Authorization: 'Bearer bench', Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
      await r.json();
      return performance.now() - t;
    }, NS));
    await page.goto(`${base}/#/cluster`);
    await page.waitForSelector('[data-testid=nodes]');
    const t0 = await page.evaluate(() => { sessionStorage.setItem('mk8s-dashboard-namespace', ''); return performance.now(); });
    await page.evaluate(() => { location.hash = '#/pods'; });
    const t1 = await page.waitForFunction((n) => document.querySelectorAll('[data-testid=pods] tbody tr').length >= n ? performance.now() : 0, PODS, { polling: 'raf', timeout: 60_000 }).then((h) => h.jsonValue() as Promise<number>);
    render.push(t1 - t0);
  }
  const r = summarize(render);
  const f = summarize(floor);
  printHeader(`dashboard, ${PODS} pods (3 rounds, median)`);
  printRow(`pod list rendered, ms`, fmt(r.p50, 0), fmt(f.p50, 0), fmt(r.p50 / f.p50), '≤ 1000 ms');
  figure(`dashboard pod list of ${PODS} pods rendered: ${fmt(r.p50, 0)} ms median of 3 (goal ≤ 1000 ms); raw LIST fetch ${fmt(f.p50, 0)} ms, ratio ${fmt(r.p50 / f.p50)}`);

  // Changes: the moment the page shows it vs the moment a plain Node watch sees it.
  const watchSeen = new Map<string, number>();
  const ac = new AbortController();
  const list = await call('GET', `/api/v1/namespaces/${NS}/pods?limit=1`) as { metadata: { resourceVersion: string } };
  void (async () => {
    const res = await fetch(`${api.url}/api/v1/namespaces/${NS}/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`, { signal: ac.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const ev = JSON.parse(buf.slice(0, i)) as { type: string; object: { metadata: { name: string }; status?: { phase?: string } } };
        buf = buf.slice(i + 1);
        watchSeen.set(`${ev.type}/${ev.object.metadata.name}/${ev.object.status?.phase ?? ''}`, Date.now());
      }
    }
  })().catch(() => undefined);

  const pageLat: Record<string, number[]> = { status: [], add: [], delete: [] };
  const rawLat: Record<string, number[]> = { status: [], add: [], delete: [] };
  for (let i = 0; i < CHANGES; i++) {
    const kind = (['status', 'add', 'delete'] as const)[i % 3]!;
    const name = kind === 'status' ? `p-${i}` : kind === 'add' ? `new-${i}` : `new-${i - 1}`;
    const wait = page.waitForFunction(({ kind, name }) => {
      const row = document.querySelector(`[data-testid=pods] tr[data-name="${name}"]`);
      const ok = kind === 'status' ? row?.querySelector('[data-col=status]')?.textContent === 'Running' : kind === 'add' ? !!row : !row;
      return ok ? Date.now() : 0;
    }, { kind, name }, { polling: 'raf', timeout: 30_000 });
    const t0 = Date.now();
    if (kind === 'status') {
      const cur = await call('GET', `/api/v1/namespaces/${NS}/pods/${name}`) as Record<string, unknown>;
      await call('PUT', `/api/v1/namespaces/${NS}/pods/${name}/status`, { ...cur, status: status(true) });
    } else if (kind === 'add') await call('POST', `/api/v1/namespaces/${NS}/pods`, pod(name));
    else await call('DELETE', `/api/v1/namespaces/${NS}/pods/${name}?gracePeriodSeconds=0`);
    const shown = await (await wait).jsonValue() as number;
    pageLat[kind]!.push(shown - t0);
    const key = kind === 'status' ? `MODIFIED/${name}/Running` : kind === 'add' ? `ADDED/${name}/` : `DELETED/${name}/`;
    for (let k = 0; k < 100 && !watchSeen.has(key) && ![...watchSeen.keys()].some((x) => x.startsWith(key)); k++) await sleep(20);
    const seen = watchSeen.get(key) ?? [...watchSeen.entries()].find(([x]) => x.startsWith(key))?.[1];
    if (seen) rawLat[kind]!.push(seen - t0);
  }
  ac.abort();
  printHeader(`dashboard, a change among ${PODS} pods shown on the page (p50 / p99 of ${CHANGES})`);
  for (const kind of ['status', 'add', 'delete'] as const) {
    const p = summarize(pageLat[kind]!);
    const w = summarize(rawLat[kind]!);
    printRow(`${kind} shown, p50 ms`, fmt(p.p50, 0), fmt(w.p50, 0), fmt(p.p50 / Math.max(1, w.p50)), '≤ 1000 ms');
    printRow(`${kind} shown, p99 ms`, fmt(p.p99, 0), fmt(w.p99, 0), fmt(p.p99 / Math.max(1, w.p99)), '≤ 1000 ms');
    figure(`dashboard ${kind} change among ${PODS} pods shown: p50 ${fmt(p.p50, 0)} ms, p99 ${fmt(p.p99, 0)} ms over ${p.n} (goal ≤ 1000 ms); raw watch p50 ${fmt(w.p50, 0)} ms`);
  }
  const [load1] = (await import('node:os')).loadavg();
  console.log(`load average ${fmt(load1 ?? 0, 1)}`);
} finally {
  await browser.close().catch(() => undefined);
  await dash.close().catch(() => undefined);
  await api.stop();
}
