/**
 * bench/apiserver-ha: what the balancer in front of N apiservers (`mkctl cluster up --apiservers N`)
 * costs a client, as ratios to the raw floor in the same run: the same requests sent straight to
 * one apiserver. haproxy runs with the config `cluster up` generates (renderHaproxyConfig; plain
 * HTTP here, so the figures are the TCP hop, not TLS) in front of that one apiserver; rounds
 * alternate which path goes first.
 *  1. GET of one ConfigMap, one in flight, a new connection per request (kubectl's pattern) and
 *     on a kept-alive connection (a controller's): p50/p99, balancer ÷ direct;
 *  2. ConfigMap creates/s at 64 in flight (kept-alive connections), balancer ÷ direct.
 * Run: node --conditions=@mk8s/source --import tsx bench/apiserver-ha/run.ts   (etcd, haproxy)
 * BENCH_REQUESTS (400), BENCH_CREATES (2000), BENCH_ROUNDS (3).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startTestApiServer } from '@mk8s/apiserver/testing';
import { haproxyArgs, renderHaproxyConfig } from '@mk8s/mkctl';
import { fmt, printHeader, printRow, runConcurrent, summarize } from '../lib.js';

const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 400);
const CREATES = Number(process.env['BENCH_CREATES'] ?? 2000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port')))); });
  });
}

async function main(): Promise<void> {
  if (spawnSync('haproxy', ['-v']).status !== 0) throw new Error('haproxy is not installed (scripts/setup.sh installs it)');
  const api = await startTestApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-bench-ha-'));
  const port = await freePort();
  const apiPort = Number(new URL(api.url).port);
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(cfg, renderHaproxyConfig({ binds: [`127.0.0.1:${port}`], servers: [{ name: 'apiserver-0', address: '127.0.0.1', port: apiPort }], statsSocket: join(dir, 'haproxy.sock') }));
  const haproxy = spawn('haproxy', haproxyArgs(cfg), { stdio: ['ignore', 'ignore', 'pipe'] });
  let haproxyErr = '';
  haproxy.stderr.on('data', (d: Buffer) => { haproxyErr += d.toString(); });
  const lb = `http://127.0.0.1:${port}`;
  try {
    // Up once its check has passed (rise 2 at 1 s).
    const deadline = Date.now() + 30_000;
    for (;;) {
      try { const r = await request(`${lb}/readyz`); await r.body.text(); if (r.statusCode === 200) break; } catch { /* not yet */ }
      if (Date.now() > deadline) throw new Error(`haproxy did not forward to the apiserver: ${haproxyErr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const create = (base: string, agent: Agent, name: string) => request(`${base}/api/v1/namespaces/default/configmaps`, {
      method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } }),
    }).then(async (r) => { await r.body.text(); if (r.statusCode !== 201) throw new Error(`create ${name}: ${r.statusCode}`); });
    const warm = new Agent({ connections: 8 });
    await create(api.url, warm, 'target');
    await warm.close();

    const get = async (base: string, fresh: boolean, n: number) => {
      const keep = new Agent({ connections: 1 });
      const res = await runConcurrent(n, 1, async () => {
        const agent = fresh ? new Agent({ connections: 1, pipelining: 0 }) : keep;
        const r = await request(`${base}/api/v1/namespaces/default/configmaps/target`, { dispatcher: agent });
        await r.body.text();
        if (fresh) await agent.close();
      });
      await keep.close();
      return res.latMs;
    };
    const lat: Record<string, number[]> = { freshDirect: [], freshLb: [], keptDirect: [], keptLb: [] };
    const rate = { direct: [] as number[], lb: [] as number[] };
    let c = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order: ['direct' | 'lb', string][] = round % 2 === 0 ? [['direct', api.url], ['lb', lb]] : [['lb', lb], ['direct', api.url]];
      for (const [who, base] of order) {
        const tag = who === 'direct' ? 'Direct' : 'Lb';
        lat[`fresh${tag}`]!.push(...await get(base, true, REQUESTS));
        lat[`kept${tag}`]!.push(...await get(base, false, REQUESTS));
        const agent = new Agent({ connections: 64 });
        const r = await runConcurrent(CREATES, 64, () => create(base, agent, `c-${c++}`));
        await agent.close();
        rate[who].push(CREATES / (r.elapsedMs / 1000));
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(`bench/apiserver-ha: ${ROUNDS} rounds, ${REQUESTS} GETs per path and kind, ${CREATES} creates per path a round; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    printHeader('through haproxy (TCP, as cluster up --apiservers N) vs straight to the apiserver');
    for (const [what, a, b, goal] of [
      ['GET p50, new connection each (ms)', 'freshLb', 'freshDirect', '≤ +0.5 ms'],
      ['GET p99, new connection each (ms)', 'freshLb', 'freshDirect', '(reported)'],
      ['GET p50, kept-alive (ms)', 'keptLb', 'keptDirect', '≤ +0.3 ms'],
      ['GET p99, kept-alive (ms)', 'keptLb', 'keptDirect', '(reported)'],
    ] as const) {
      const p = what.includes('p50') ? 'p50' : 'p99';
      const x = summarize(lat[a]!)[p]; const y = summarize(lat[b]!)[p];
      printRow(what, fmt(x), fmt(y), p === 'p50' ? `+${fmt(x - y)}ms` : fmt(x / y), goal);
    }
    const lbRate = median(rate.lb); const directRate = median(rate.direct);
    printRow('creates/s (64 in flight, median)', fmt(lbRate, 0), fmt(directRate, 0), fmt(lbRate / directRate), '≥ 0.9');
  } finally {
    haproxy.kill('SIGTERM');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
